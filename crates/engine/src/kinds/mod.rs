//! The test kinds; each in its own file, listed once in [`REGISTRY`].
//!
//! Adding a kind edits at most five existing files. In proto, crates/proto/src/kind.rs: its
//! variant of `KindId`, its descriptor and its lines in `KindId::descriptor` and `KINDS`, and
//! its variant of `KindPlan`, carrying its options, with its arm in `KindPlan::id` and
//! `KindPlan::validate`, and the `pub mod` of its own file (crates/proto/src/kind/<kind>.rs:
//! its options and their bounds, as udp.rs holds the UDP stream's). Here, its file (its
//! `flows`) and its line in [`REGISTRY`] (with its wiring, and what it gets on loopback). On
//! the command line, its args file,
//! named in src/cli/mod.rs, and its variant in src/cli/test_args.rs. A kind with counters of
//! its own adds a variant of `FlowKindCounters` (crates/proto/src/kind.rs) and, in its own
//! folder, their `crate::measure::Publish` (how its flows publish them; the profile's
//! `counters.rs`).
//!
//! The agent asks the registry ([`Kind::of`]) and needs no change. Socket set-up on both ends,
//! which end decides when the test ends, the path defaults, the report's per-pattern sections,
//! series metrics and study commands follow from the descriptor and the kind's
//! [`crate::kind::Wiring`]; its command-line options live in src/cli/, and a new pattern adds
//! its report section once (crates/report/).

mod crr;
mod file;
pub use file::remove_stale_parts;
pub(crate) use profile::moves_datagrams;
pub use profile::SharedBarriers;
mod pacer;
mod profile;
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
    Kind::new(KindId::Rr, Wiring::TcpPerFlow, rr::flows).on_loopback(Loopback::EndsApart),
    Kind::new(KindId::Crr, Wiring::TcpPerTransaction, crr::flows).on_loopback(Loopback::EndsApart),
    Kind::new(KindId::UdpRr, Wiring::UdpPerFlow, udp_rr::flows).on_loopback(Loopback::EndsApart),
    Kind::new(KindId::Udp, Wiring::UdpPerFlow, udp::flows),
    Kind::new(KindId::File, Wiring::TcpPerFlow, file::flows),
    Kind::new(KindId::Profile, Wiring::TcpPerTransaction, profile::flows)
        .on_loopback(Loopback::EndsApart),
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
