//! The test kinds; each in its own file, listed once in [`REGISTRY`].
//!
//! Adding a kind touches: its variant of `KindId` (crates/proto/src/plan.rs, the wire name) and
//! its descriptor with its line in `KindId::descriptor` and `KINDS` (crates/proto/src/kind.rs);
//! its file here and its line in [`REGISTRY`]; its command-line options (src/cli/); and, only if
//! it adds figures, its report section (crates/report/src/model/, with the builder filling it).
//! Socket set-up on both ends, which end decides when the test ends, the report's per-pattern
//! sections, series metrics and study commands follow from the descriptor and the kind's
//! [`crate::kind::Wiring`]. A kind with options of its own adds them to the plan in a file of
//! its own beside plan.rs (as udp.rs does for the UDP stream, with their bounds), and a new
//! pattern adds its report section and table once (crates/report/src/{udp,table_udp}.rs).

mod crr;
mod pacer;
mod rr;
mod stream;
mod udp;
mod udp_rr;

use crate::kind::Kind;

/// Every kind the engine can run.
pub static REGISTRY: &[&dyn Kind] = &[
    &stream::Stream,
    &rr::Rr,
    &crr::Crr,
    &udp_rr::UdpRr,
    &udp::Udp,
];

#[cfg(test)]
mod tests {
    use super::REGISTRY;

    #[test]
    fn wiring_matches_the_descriptors_transport() {
        for k in REGISTRY {
            assert_eq!(
                k.wiring().transport(),
                k.descriptor().transport,
                "{}",
                k.descriptor().name
            );
        }
    }
}
