//! A test plan: everything both ends need to run one test, validated (see [`crate::validate`])
//! before it is sent and again when it arrives.

use crate::file::FileOptions;
pub use crate::flow::{Direction, FlowPlan};
pub use crate::kind::{KindId, KindPlan};
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
    /// SO_MAX_PACING_RATE, bytes per second per connection (`stream --rate`). Only the
    /// controller's own end sends with it (forward streams), so it stays off the wire and
    /// the protocol keeps its version.
    #[serde(skip)]
    pub max_pacing_rate: Option<u64>,
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
    /// Bytes per read call (stream); 0 lets each end choose (its L1 data cache size; a
    /// stream off loopback reads at least 128K).
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
            write_size: 128 << 10,
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
