//! A test plan: everything both ends need to run one test, validated (see [`crate::validate`])
//! before it is sent and again when it arrives.

use crate::bounds::PlanError;
use crate::file::FileOptions;
pub use crate::flow::{Direction, FlowPlan};
pub use crate::kind::KindId;
pub use crate::rr::RrOptions;
use crate::udp::UdpOptions;
use serde::{Deserialize, Serialize};

/// When the test stops.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Run for this long after the warm-up (`-t`).
    Time {
        /// Length of the measured window.
        duration_ns: u64,
    },
    /// Move exactly this many payload bytes in each direction, split over the flows (`-n`).
    Bytes(u64),
    /// Perform exactly this many transactions, split over the flows.
    Transactions(u64),
    /// Send exactly this many datagrams in each direction, split over the flows.
    Datagrams(u64),
}

/// Socket options applied on both ends of every data connection.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// SO_SNDBUF request in bytes, or kernel autotuning.
    pub sndbuf: Option<u32>,
    /// SO_RCVBUF request in bytes, or kernel autotuning.
    pub rcvbuf: Option<u32>,
    /// TCP_NODELAY (Nagle off).
    pub nodelay: bool,
    /// TCP_CONGESTION algorithm.
    pub cc: Option<String>,
    /// TCP_MAXSEG.
    pub mss: Option<u32>,
    /// Re-arm TCP_QUICKACK after every read (delayed ACKs off).
    pub quickack: bool,
    /// Spin in the event loop instead of sleeping, and set SO_BUSY_POLL.
    pub busy_poll: bool,
    /// Force IPv6 (true) or IPv4 (false) for addresses that could be either.
    pub ipv6: Option<bool>,
}

/// Options that differ between the two ends.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct SideOptions {
    /// Pin worker threads round-robin to these CPUs.
    pub affinity: Option<Vec<u32>>,
    /// Confine every worker thread to this set of CPUs, the scheduler placing them within it
    /// (`--cpus N`: the CPUs a machine would have with the others offline).
    pub cpu_set: Option<Vec<u32>>,
    /// Number of worker threads; default one per CPU, at most one per flow.
    pub threads: Option<u32>,
}

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
        }
    }

    /// The request/response kind `id` with `options`; none when `id` is of another pattern.
    pub fn request_response(id: KindId, options: RrOptions) -> Option<KindPlan> {
        match id {
            KindId::Rr => Some(KindPlan::Rr(options)),
            KindId::Crr => Some(KindPlan::Crr(options)),
            KindId::UdpRr => Some(KindPlan::UdpRr(options)),
            KindId::Stream | KindId::Udp | KindId::File => None,
        }
    }

    /// The name used on the command line and in results.
    pub fn name(&self) -> &'static str {
        self.id().name()
    }

    /// What the kind is: its name, transport, pattern and figures.
    pub fn descriptor(&self) -> &'static crate::kind::Descriptor {
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

/// Everything both ends need to run one test.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TestPlan {
    /// What to run, with the options only that kind has.
    pub kind: KindPlan,
    /// The flows, each with its direction.
    pub flows: Vec<FlowPlan>,
    /// When to stop.
    pub limit: Limit,
    /// Warm-up excluded from the measured window.
    pub omit_ns: u64,
    /// Interval between samples.
    pub interval_ns: u64,
    /// Options on every data socket.
    pub socket: SocketOptions,
    /// Bytes per write call (stream).
    pub write_size: u32,
    /// Bytes per read call (stream); 0 lets each end choose (its L1 data cache size).
    pub read_size: u32,
    /// Send with sendfile from an in-memory file instead of copying writes.
    pub zerocopy: bool,
    /// TLS on every data connection (TCP kinds), or clear.
    pub tls: Option<crate::tls::TlsOptions>,
    /// The client end (the connecting side: the controller's own end, or client agents).
    pub client: SideOptions,
    /// The server end (the accepting agent).
    pub server: SideOptions,
}

impl Default for TestPlan {
    /// A 10 s stream with no flows yet, 1 s intervals and default socket options.
    fn default() -> Self {
        TestPlan {
            kind: KindPlan::Stream,
            flows: Vec::new(),
            limit: Limit::Time {
                duration_ns: 10_000_000_000,
            },
            omit_ns: 0,
            interval_ns: 1_000_000_000,
            socket: SocketOptions::default(),
            write_size: 1 << 20,
            read_size: 0,
            zerocopy: false,
            tls: None,
            client: SideOptions::default(),
            server: SideOptions::default(),
        }
    }
}

impl TestPlan {
    /// Payload bytes flow `index` of `n` moves when `total` are split over the flows going one way.
    pub fn share(total: u64, index: u64, n: u64) -> u64 {
        total / n + u64::from(index < total % n)
    }

    /// The request/response options, for the request/response kinds.
    pub fn rr(&self) -> Option<&RrOptions> {
        self.kind.rr()
    }

    /// The datagram shape and pacing, for the UDP stream kind.
    pub fn udp(&self) -> Option<&UdpOptions> {
        self.kind.udp()
    }

    /// What to copy and how, for the file kind.
    pub fn file(&self) -> Option<&FileOptions> {
        self.kind.file()
    }

    /// The flows going `dir`, in order.
    pub fn flows_in(&self, dir: Direction) -> impl Iterator<Item = &FlowPlan> {
        self.flows.iter().filter(move |f| f.dir == dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_total() {
        for (total, n) in [(104_857_600u64, 3u64), (5, 7), (0, 1), (1000, 1000)] {
            let sum: u64 = (0..n).map(|i| TestPlan::share(total, i, n)).sum();
            assert_eq!(sum, total);
        }
    }
}
