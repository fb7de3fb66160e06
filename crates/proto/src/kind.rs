//! What each test kind is, as data: its name, the command that runs it, its transport, pattern,
//! headline metric and the figures it adds to the report, one [`Descriptor`] per kind, found with [`KindId::descriptor`].
//!
//! The descriptor is split in two on purpose. This half is static data that every crate needs:
//! the report crate (which builds results and must stay free of sockets and event loops, so it
//! does not depend on the engine), the store and the study crate (through the report), and the
//! command line. It lives here, beside [`KindId`], because this crate is the one all of them
//! share. The other half is behaviour (how a kind's sockets are set up on each end and the flows
//! that drive them); it lives with each kind in `crates/engine/src/kinds/`, in the engine's
//! `Kind`, whose `descriptor()` returns the data below. Code outside those two places asks
//! the descriptor and never matches on a kind's id or name.
//!
//! Beside them, [`KindPlan`]: a plan's kind with the options only it has (each kind's options
//! and bounds in a file of its own, such as `udp.rs`, which imports nothing from here), and
//! [`FlowKindCounters`]: the counters a kind keeps of its own (their type in its file too), so
//! that a new kind's variants in proto are all in this file. `crate::plan` re-exports
//! `KindPlan`, `crate::sample` `FlowKindCounters`.

use crate::bounds::PlanError;
use crate::file::{FileCounters, FileOptions};
use crate::flow::FlowPlan;
use crate::profile::{ProfileCounters, Program};
use crate::rr::RrOptions;
use crate::udp::{UdpCounters, UdpOptions};
use serde::{Deserialize, Serialize};

/// The test kinds the engine knows; what each is lives in its [`Descriptor`], and the options
/// only it has in its variant of [`KindPlan`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KindId {
    /// Bulk transfer over TCP.
    Stream,
    /// TCP request/response on long-lived connections.
    Rr,
    /// TCP connect/request/response/close, one connection per transaction.
    Crr,
    /// UDP request/response.
    UdpRr,
    /// A UDP datagram stream: packet rate, loss, reordering and jitter.
    Udp,
    /// A file copy, disk to disk.
    File,
    /// A workload profile's group: every flow runs a program of flow operations.
    Profile,
}

/// What carries a kind's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
}

/// How a kind moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// One side sends as fast as it can; the other reads.
    Stream,
    /// One side asks, the other answers: the report's `rr` sections.
    RequestResponse,
    /// One side sends numbered datagrams, the other counts them, their gaps, duplicates, order
    /// and jitter: the report's `udp` sections.
    DatagramStream,
    /// Each flow runs a program of flow operations (connect, write, read, think, ...) and the
    /// other end its mirror; the side running the program as written decides when it ends:
    /// the report's `profile` section.
    Program,
}

/// A figure a kind adds to its pattern's report section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Connections opened (and closed) per second: one connection per transaction.
    ConnectionsPerSecond,
    /// Transactions given up after a timeout, and that timeout.
    Lost,
    /// TCP segments per transaction seen by the asking sockets.
    SegmentsPerTransaction,
}

/// One test kind, as data.
#[derive(Debug)]
pub struct Descriptor {
    /// Its id on the wire.
    pub id: KindId,
    /// The name in results and listings ("udp_rr").
    pub name: &'static str,
    /// The subcommand that runs it (`fathom rr`).
    pub command: &'static str,
    /// Flags after the subcommand that select it among the subcommand's kinds (["--udp"]).
    pub flags: &'static [&'static str],
    /// What carries the payload.
    pub transport: Transport,
    /// How it moves data.
    pub pattern: Pattern,
    /// The metric a series of its runs is judged by (a name from the report's metric list;
    /// its label and unit come from the report's one table of metric names, as every metric's).
    pub primary_metric: &'static str,
    /// Figures it adds to its pattern's report section.
    pub figures: &'static [Figure],
}

impl Descriptor {
    /// True when the kind reports `figure`.
    pub fn adds(&self, figure: Figure) -> bool {
        self.figures.contains(&figure)
    }

    /// True for the request/response kinds.
    pub fn is_rr(&self) -> bool {
        self.pattern == Pattern::RequestResponse
    }

    /// True for the kinds whose leading side records each transaction's latency: the
    /// request/response kinds, and programs (each iteration's time).
    pub fn times_transactions(&self) -> bool {
        matches!(self.pattern, Pattern::RequestResponse | Pattern::Program)
    }

    /// True when the leading side (the sender, or the asker) decides when a test ends and the
    /// other side must be told to finish, because no end of stream reaches it: every pattern
    /// but the TCP stream, whose receivers see the sender close.
    pub fn leader_ends_test(&self) -> bool {
        self.pattern != Pattern::Stream
    }
}

const STREAM: Descriptor = Descriptor {
    id: KindId::Stream,
    name: "stream",
    command: "stream",
    flags: &[],
    transport: Transport::Tcp,
    pattern: Pattern::Stream,
    primary_metric: "bits_per_second",
    figures: &[],
};

const UDP: Descriptor = Descriptor {
    id: KindId::Udp,
    name: "udp",
    command: "udp",
    flags: &[],
    transport: Transport::Udp,
    pattern: Pattern::DatagramStream,
    primary_metric: "datagrams_per_second",
    figures: &[],
};

const FILE: Descriptor = Descriptor {
    id: KindId::File,
    name: "file",
    command: "file",
    flags: &[],
    transport: Transport::Tcp,
    pattern: Pattern::Stream,
    primary_metric: "bits_per_second",
    figures: &[],
};

const PROFILE: Descriptor = Descriptor {
    id: KindId::Profile,
    name: "profile",
    command: "profile",
    flags: &["run"],
    transport: Transport::Tcp,
    pattern: Pattern::Program,
    primary_metric: "bits_per_second",
    figures: &[],
};

/// A request/response kind over `transport`, run by `command` and `flags`, adding `figures`.
const fn request_response(
    id: KindId,
    name: &'static str,
    (command, flags): (&'static str, &'static [&'static str]),
    transport: Transport,
    figures: &'static [Figure],
) -> Descriptor {
    Descriptor {
        id,
        name,
        command,
        flags,
        transport,
        pattern: Pattern::RequestResponse,
        primary_metric: "transactions_per_second",
        figures,
    }
}

const RR: Descriptor = request_response(
    KindId::Rr,
    "rr",
    ("rr", &[]),
    Transport::Tcp,
    &[Figure::SegmentsPerTransaction],
);

const CRR: Descriptor = request_response(
    KindId::Crr,
    "crr",
    ("crr", &[]),
    Transport::Tcp,
    &[Figure::ConnectionsPerSecond],
);

const UDP_RR: Descriptor = request_response(
    KindId::UdpRr,
    "udp_rr",
    ("rr", &["--udp"]),
    Transport::Udp,
    &[Figure::Lost],
);

/// The registry: every kind, one line each.
pub const KINDS: &[&Descriptor] = &[&STREAM, &RR, &CRR, &UDP_RR, &UDP, &FILE, &PROFILE];

impl KindId {
    /// This kind's descriptor.
    pub fn descriptor(self) -> &'static Descriptor {
        match self {
            KindId::Stream => &STREAM,
            KindId::Rr => &RR,
            KindId::Crr => &CRR,
            KindId::UdpRr => &UDP_RR,
            KindId::Udp => &UDP,
            KindId::File => &FILE,
            KindId::Profile => &PROFILE,
        }
    }

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// True for the kinds that carry request/response options (`KindPlan::rr`).
    pub fn is_request_response(self) -> bool {
        self.descriptor().is_rr()
    }

    /// True for the kinds whose payload travels in datagrams (sizes capped at one UDP payload).
    pub fn is_datagram(self) -> bool {
        self.descriptor().transport == Transport::Udp
    }

    /// The kind named `name` in results, if there is one.
    pub fn from_name(name: &str) -> Option<KindId> {
        KINDS.iter().find(|d| d.name == name).map(|d| d.id)
    }
}

/// A kind's own flow counters: the variant of [`FlowKindCounters`] that carries them, so a
/// snapshot's reader asks for the type (`FlowSnapshot::counters`) instead of a method per kind.
pub trait KindCounters: Sized {
    /// These counters, if `k` holds them.
    fn of(k: FlowKindCounters) -> Option<Self>;
}

/// Declares [`FlowKindCounters`], one variant per kind with counters of its own, and each
/// variant's [`KindCounters`].
macro_rules! flow_kind_counters {
    ($($(#[$vdoc:meta])* $variant:ident($ty:ty)),+ $(,)?) => {
        /// One flow's counters that only its kind keeps (each kind's type in its own file).
        // The profile's counts per flowop are the large variant; `FlowSnapshot` boxes the whole
        // value instead, so the enum stays `Copy` and flows without kind counters stay small.
        #[allow(clippy::large_enum_variant)]
        #[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
        pub enum FlowKindCounters {
            $($(#[$vdoc])* $variant($ty)),+
        }

        $(
            impl KindCounters for $ty {
                fn of(k: FlowKindCounters) -> Option<Self> {
                    match k {
                        FlowKindCounters::$variant(c) => Some(c),
                        _ => None,
                    }
                }
            }
        )+
    };
}

// The order is the wire's (postcard numbers the variants): a new kind's goes last.
flow_kind_counters!(
    /// The UDP stream's datagram counters.
    Udp(UdpCounters),
    /// The file copy's disk and network counters.
    File(FileCounters),
    /// A profile flow's counts per flow operation.
    Profile(ProfileCounters),
);

/// What to run: the kind, with the options only it has.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum KindPlan {
    /// Bulk transfer over TCP.
    Stream,
    /// TCP request/response on long-lived connections.
    Rr(RrOptions),
    /// TCP connect/request/response/close, one connection per transaction.
    Crr(RrOptions),
    /// UDP request/response.
    UdpRr(RrOptions),
    /// A UDP datagram stream.
    Udp(UdpOptions),
    /// A file copy, disk to disk.
    File(FileOptions),
    /// A profile group's flows, each running this program (the other end its mirror).
    Profile(Program),
}

impl Default for KindPlan {
    /// A stream.
    fn default() -> Self {
        KindPlan::Stream
    }
}

impl KindPlan {
    /// The kind's id, whose descriptor says what it is.
    pub fn id(&self) -> KindId {
        match self {
            KindPlan::Stream => KindId::Stream,
            KindPlan::Rr(_) => KindId::Rr,
            KindPlan::Crr(_) => KindId::Crr,
            KindPlan::UdpRr(_) => KindId::UdpRr,
            KindPlan::Udp(_) => KindId::Udp,
            KindPlan::File(_) => KindId::File,
            KindPlan::Profile(_) => KindId::Profile,
        }
    }

    /// The request/response kind `id` with `options`; none when `id` is of another pattern.
    pub fn request_response(id: KindId, options: RrOptions) -> Option<KindPlan> {
        match id {
            KindId::Rr => Some(KindPlan::Rr(options)),
            KindId::Crr => Some(KindPlan::Crr(options)),
            KindId::UdpRr => Some(KindPlan::UdpRr(options)),
            KindId::Stream | KindId::Udp | KindId::File | KindId::Profile => None,
        }
    }

    /// The name used on the command line and in results.
    pub fn name(&self) -> &'static str {
        self.id().name()
    }

    /// What the kind is: its name, transport, pattern and figures.
    pub fn descriptor(&self) -> &'static Descriptor {
        self.id().descriptor()
    }

    /// Checks the kind's own options against their bounds; `flows` are the test's, `tls` says
    /// whether it asks for TLS.
    pub(crate) fn validate(&self, flows: &[FlowPlan], tls: bool) -> Result<(), PlanError> {
        match self {
            KindPlan::Stream => Ok(()),
            KindPlan::Rr(o) | KindPlan::Crr(o) | KindPlan::UdpRr(o) => {
                o.validate(self.id().is_datagram())
            }
            KindPlan::Udp(o) => o.validate(),
            KindPlan::File(o) => o.validate(flows, tls),
            KindPlan::Profile(p) => p.validate(),
        }
    }

    /// The request/response options, for the request/response kinds.
    pub fn rr(&self) -> Option<&RrOptions> {
        match self {
            KindPlan::Rr(o) | KindPlan::Crr(o) | KindPlan::UdpRr(o) => Some(o),
            _ => None,
        }
    }

    /// The request/response options to change, for the request/response kinds.
    pub fn rr_mut(&mut self) -> Option<&mut RrOptions> {
        match self {
            KindPlan::Rr(o) | KindPlan::Crr(o) | KindPlan::UdpRr(o) => Some(o),
            _ => None,
        }
    }

    /// The datagram shape and pacing, for the UDP stream kind.
    pub fn udp(&self) -> Option<&UdpOptions> {
        match self {
            KindPlan::Udp(o) => Some(o),
            _ => None,
        }
    }

    /// The datagram shape and pacing to change, for the UDP stream kind.
    pub fn udp_mut(&mut self) -> Option<&mut UdpOptions> {
        match self {
            KindPlan::Udp(o) => Some(o),
            _ => None,
        }
    }

    /// What to copy and how, for the file kind.
    pub fn file(&self) -> Option<&FileOptions> {
        match self {
            KindPlan::File(o) => Some(o),
            _ => None,
        }
    }

    /// What to copy and how, to change, for the file kind.
    pub fn file_mut(&mut self) -> Option<&mut FileOptions> {
        match self {
            KindPlan::File(o) => Some(o),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_and_descriptors_agree() {
        for d in KINDS {
            assert_eq!(d.id.descriptor().name, d.name);
            assert_eq!(KindId::from_name(d.name), Some(d.id));
        }
        assert_eq!(KindId::from_name("tls"), None);
    }
}
