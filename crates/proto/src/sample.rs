//! What an endpoint measures: cumulative snapshots taken at interval boundaries, and the static
//! facts about its sockets, threads and host reported once at the end.
//!
//! Endpoints send raw cumulative values; the controller computes every difference, so each
//! figure is derived in one place.

use crate::file::FileCounters;
pub use crate::kind::FlowKindCounters;
use crate::kind::KindCounters;
use crate::udp::{UdpCounters, UdpHostCounters};
use serde::{Deserialize, Serialize};

/// Why a snapshot was taken.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The test started (t = 0).
    Start,
    /// An interval boundary.
    Interval,
    /// The warm-up ended: the measured window begins here.
    WindowStart,
    /// The measured window ends here.
    WindowEnd,
    /// The endpoint finished (all flows done or drained).
    Final,
}

/// The subset of Linux `struct tcp_info` fathom reports. Counters are cumulative.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// TCP state (1 = established).
    pub state: u8,
    /// Retransmitted segments so far (tcpi_total_retrans).
    pub retransmits: u32,
    /// Smoothed round-trip time, µs.
    pub rtt_us: u32,
    /// Round-trip time variation, µs.
    pub rttvar_us: u32,
    /// Minimum round-trip time seen, µs.
    pub min_rtt_us: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Send MSS, bytes.
    pub snd_mss: u32,
    /// Receive MSS estimate, bytes.
    pub rcv_mss: u32,
    /// Segments sent.
    pub segs_out: u32,
    /// Segments received.
    pub segs_in: u32,
    /// Segments sent that carried data.
    pub data_segs_out: u32,
    /// Segments received that carried data.
    pub data_segs_in: u32,
    /// Most recent delivery rate estimate, bytes/s.
    pub delivery_rate: u64,
    /// Pacing rate, bytes/s.
    pub pacing_rate: u64,
    /// Time with data in flight, µs.
    pub busy_time_us: u64,
    /// Time limited by the peer's receive window, µs.
    pub rwnd_limited_us: u64,
    /// Time limited by the send buffer, µs.
    pub sndbuf_limited_us: u64,
    /// Bytes acknowledged.
    pub bytes_acked: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Bytes retransmitted.
    pub bytes_retrans: u64,
    /// The peer's advertised receive window, bytes.
    pub snd_wnd: u32,
    /// The receive window we advertise, bytes.
    pub rcv_wnd: u32,
    /// Bytes written but not yet sent.
    pub notsent_bytes: u32,
    /// Segments sent but not yet acknowledged.
    pub unacked: u32,
}

/// One flow's cumulative counters at a snapshot. Not `Copy`: the controller keeps one per
/// flow per interval, so a kind's counters (up to 392 bytes) are boxed and only the flows
/// that have them pay for them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowSnapshot {
    /// Payload bytes written by this endpoint.
    pub sent: u64,
    /// Payload bytes read by this endpoint.
    pub received: u64,
    /// Transactions completed (request/response kinds; the requester counts).
    pub transactions: u64,
    /// Transactions given up (UDP: no answer in time).
    pub lost: u64,
    /// TCP_INFO of the flow's socket, when it has one.
    pub tcp: Option<TcpInfo>,
    /// The counters only the flow's kind keeps, for the kinds that keep any (boxed, the wire
    /// is the same).
    pub kind: Option<Box<FlowKindCounters>>,
}

impl FlowSnapshot {
    /// The counters only this flow's kind keeps, as that kind's type (`None` when another
    /// kind's, or none, are here): `snap.counters::<ProfileCounters>()`.
    pub fn counters<C: KindCounters>(&self) -> Option<C> {
        self.kind.as_deref().copied().and_then(C::of)
    }

    /// The UDP stream counters, for the datagram stream kinds.
    pub fn udp(&self) -> Option<UdpCounters> {
        self.counters()
    }

    /// The file copy counters, for the file kind.
    pub fn file(&self) -> Option<FileCounters> {
        self.counters()
    }
}

/// One CPU's /proc/stat times, in clock ticks (USER_HZ).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// user + nice.
    pub user: u64,
    /// system.
    pub system: u64,
    /// idle + iowait.
    pub idle: u64,
    /// hardware interrupts.
    pub irq: u64,
    /// software interrupts (most of the network stack's receive work).
    pub softirq: u64,
    /// time stolen by the hypervisor.
    pub steal: u64,
}

impl CpuTicks {
    /// All ticks.
    pub fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.irq + self.softirq + self.steal
    }
    /// Non-idle ticks.
    pub fn busy(&self) -> u64 {
        self.total() - self.idle
    }
    /// Field-wise `self - earlier`, saturating.
    pub fn since(&self, earlier: &CpuTicks) -> CpuTicks {
        self.zip_with(earlier, u64::saturating_sub)
    }
    /// Field-wise `self + other`, saturating.
    pub fn plus(&self, other: &CpuTicks) -> CpuTicks {
        self.zip_with(other, u64::saturating_add)
    }
    /// Field-wise `f(self, other)`.
    fn zip_with(&self, other: &CpuTicks, f: fn(u64, u64) -> u64) -> CpuTicks {
        CpuTicks {
            user: f(self.user, other.user),
            system: f(self.system, other.system),
            idle: f(self.idle, other.idle),
            irq: f(self.irq, other.irq),
            softirq: f(self.softirq, other.softirq),
            steal: f(self.steal, other.steal),
        }
    }
}

/// CPU counters of an endpoint at a snapshot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSnapshot {
    /// Per CPU, from /proc/stat.
    pub per_cpu: Vec<CpuTicks>,
    /// CPU time of this endpoint's own threads (workers and sampler), ns.
    pub threads_ns: u64,
    /// The whole process's user time (getrusage), µs.
    pub process_user_us: u64,
    /// The whole process's system time (getrusage), µs.
    pub process_system_us: u64,
}

/// Everything an endpoint measured at one instant.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Why it was taken.
    pub mark: Mark,
    /// When, in ns since the test's start instant t0 (the endpoint's own clock).
    pub t_ns: i64,
    /// Per flow, in the order of the endpoint's flow list.
    pub flows: Vec<FlowSnapshot>,
    /// CPU counters.
    pub cpu: CpuSnapshot,
    /// Latency histogram of transactions completed since the previous snapshot, serialized
    /// (HDR V2), for request/response kinds.
    pub latency: Option<Vec<u8>>,
    /// The host's counters that only the test's kind reads, for the kinds that read any.
    pub kind: Option<HostKindCounters>,
    /// The profile kind: each flow operation's times since the previous snapshot, serialized
    /// (HDR V2, ns), one per operation in program order (the first
    /// [`PROFILE_OPS`](crate::profile::PROFILE_OPS)); empty for other kinds.
    #[serde(default)]
    pub op_latency: Vec<Vec<u8>>,
}

/// A host's counters that only one kind reads.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKindCounters {
    /// The host's UDP counters, for the datagram stream kinds.
    Udp(UdpHostCounters),
}

impl Snapshot {
    /// The host's UDP counters, for the datagram stream kinds.
    pub fn udp_host(&self) -> Option<UdpHostCounters> {
        self.kind.map(|HostKindCounters::Udp(u)| u)
    }
}

/// Socket facts of one flow.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowInfo {
    /// The flow's id in the plan.
    pub id: u32,
    /// Local address of the data socket.
    pub local: String,
    /// Peer address of the data socket.
    pub peer: String,
    /// SO_SNDBUF as the kernel reported it after the request (or autotuning's start).
    pub sndbuf: u32,
    /// SO_RCVBUF likewise.
    pub rcvbuf: u32,
    /// SO_SNDBUF at the end of the test (autotuning grows it).
    pub sndbuf_end: u32,
    /// SO_RCVBUF at the end of the test.
    pub rcvbuf_end: u32,
    /// Congestion control in use.
    pub cc: String,
    /// TCP_MAXSEG in effect.
    pub mss: u32,
    /// Time of the flow's first payload byte, ns since t0.
    pub first_byte_ns: Option<i64>,
    /// Time of the flow's last payload byte, ns since t0.
    pub last_byte_ns: Option<i64>,
}

/// Where a worker thread ran.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadInfo {
    /// The CPU it was pinned to, if any.
    pub pinned: Option<u32>,
    /// The CPU it last ran on.
    pub last_cpu: u32,
    /// Flows it served.
    pub flows: u32,
    /// Its CPU time over the whole test, ns.
    pub cpu_ns: u64,
}

/// The kernel's socket buffer limits, read from /proc/sys.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferLimits {
    /// net.core.rmem_max.
    pub rmem_max: u64,
    /// net.core.wmem_max.
    pub wmem_max: u64,
    /// net.ipv4.tcp_rmem (min, default, max).
    pub tcp_rmem: [u64; 3],
    /// net.ipv4.tcp_wmem (min, default, max).
    pub tcp_wmem: [u64; 3],
}

/// Facts about a host.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// Online CPUs.
    pub cpus: u32,
    /// fathom's version.
    pub version: String,
    /// /proc/stat clock ticks per second (USER_HZ).
    pub clock_ticks: u32,
}

/// What an endpoint reports once, after its last snapshot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct EndpointInfo {
    /// The host.
    pub host: HostInfo,
    /// Per flow, in the order of the snapshots' flow lists.
    pub flows: Vec<FlowInfo>,
    /// Per worker thread.
    pub threads: Vec<ThreadInfo>,
    /// How workers waited for work: "epoll" or "busy-poll".
    pub wait: String,
    /// Bytes per read call this end used.
    pub read_size: u32,
    /// Kernel buffer limits.
    pub limits: BufferLimits,
    /// CPU time the sampler spent measuring (snapshots, TCP_INFO, /proc/stat), ns.
    pub sampler_cpu_ns: u64,
    /// TLS tests: the sessions this end ran.
    pub tls: Option<crate::tls::TlsInfo>,
    /// Set when the endpoint failed; its snapshots up to then are still valid.
    pub error: Option<String>,
    /// Defaults this end chose for its path, each saying what and why (such as "loopback path:
    /// send buffers 64K, ..."); empty when the plan's options applied as they were.
    #[serde(default)]
    pub defaults: Vec<String>,
    /// The send buffer this end chose for its path when the plan left it to the kernel (bytes
    /// requested), as `defaults` explains.
    #[serde(default)]
    pub chosen_sndbuf: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_without_kind_counters_stays_small() {
        // The controller keeps one per flow per interval: a kind's counters sit apart.
        assert!(std::mem::size_of::<FlowSnapshot>() < std::mem::size_of::<FlowKindCounters>());
    }
}
