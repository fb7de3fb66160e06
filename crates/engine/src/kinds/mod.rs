//! The test kinds; each in its own file, listed once in [`REGISTRY`].
//!
//! Adding a kind touches: its variant of `KindId` (crates/proto/src/plan.rs, the wire name) and
//! its descriptor with its line in `KindId::descriptor` and `KINDS` (crates/proto/src/kind.rs);
//! its file here (its `flows`) and its line in [`REGISTRY`] (with its wiring); its command-line
//! options (src/cli/); and, only if it adds figures, its report section
//! (crates/report/src/model/, with the builder filling it).
//! Socket set-up on both ends, which end decides when the test ends, the report's per-pattern
//! sections, series metrics and study commands follow from the descriptor and the kind's
//! [`crate::kind::Wiring`]. A kind with options of its own adds them to the plan in a file of
//! its own beside plan.rs (as udp.rs does for the UDP stream, with their bounds), and a new
//! pattern adds its report section and table once (crates/report/src/{udp,table_udp}.rs).

mod crr;
mod file;
pub use file::remove_stale_parts;
mod pacer;
mod rr;
mod stream;
mod udp;
pub use udp::{offload_available, unsupported};
mod udp_rr;

use crate::kind::{Kind, Loopback, Wiring};
use fathom_proto::plan::KindId;
use std::io;

/// Every kind the engine can run.
pub static REGISTRY: &[Kind] = &[
    Kind::new(KindId::Stream, Wiring::TcpPerFlow, stream::flows)
        .on_loopback(Loopback::ReceiverOnSenderCpu),
    Kind::new(KindId::Rr, Wiring::TcpPerFlow, rr::flows).on_loopback(Loopback::EndsShareCpu),
    Kind::new(KindId::Crr, Wiring::TcpPerTransaction, crr::flows),
    Kind::new(KindId::UdpRr, Wiring::UdpPerFlow, udp_rr::flows),
    Kind::new(KindId::Udp, Wiring::UdpPerFlow, udp::flows),
    Kind::new(KindId::File, Wiring::TcpPerFlow, file::flows),
];

impl Kind {
    /// The kind registered for `id`, or an error saying this build cannot run it.
    pub fn of(id: KindId) -> io::Result<&'static Kind> {
        REGISTRY.iter().find(|k| k.id() == id).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!("test kind {} is not built in", id.name()),
            )
        })
    }
}

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
