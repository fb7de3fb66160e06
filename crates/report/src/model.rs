//! The result of one test, as every renderer sees it. Serialized as-is, this is fathom's JSON
//! output (documented in docs/output.md, schema in docs/schema/result.schema.json): change a
//! field here and the schema version with it.

pub mod advice;
mod cpu;
mod hosts;
pub mod kind;
mod tcp;
pub mod tls;
pub use crate::sections::file::model as file;
pub use crate::sections::profile::model as profile;
pub use crate::sections::rr::model as rr;
pub use crate::sections::udp::model as udp;

pub use advice::Advice;
pub use cpu::{Cpu, CpuOne, CpuPair, PeerCpu, ServiceDemand};
use file::{FileStages, FileSummary};
pub use hosts::{
    GroupResult, HostResult, IpsecLinkResult, IpsecResult, ThreadResult, WanLinkResult,
};
use kind::kind_value;
use profile::{ProfileInterval, ProfileSummary};
pub use rr::{Latency, RrFlow, RrInterval, RrSummary, RrTest, SegmentsPerTransaction};
use serde::{Deserialize, Serialize};
pub use tcp::{BufferRequest, Buffers, TcpSummary};
pub use udp::{UdpFlow, UdpInterval, UdpSummary, UdpTest};

kind_value!(
    /// A kind's options as run (`test.rr`, `test.udp`).
    KindTest in TestEcho, always &["rr", "udp"], {
        /// Request/response kinds.
        Rr(RrTest) = "rr", rr,
        /// UDP stream kinds.
        Udp(UdpTest) = "udp", udp,
    }
);

kind_value!(
    /// A kind's figures over the measured window (`summary.rr`, `.udp`, `.file`).
    KindSummary in Summary, always &["rr", "udp", "file"], {
        /// Transactions, latency and what they cost.
        Rr(RrSummary) = "rr", rr,
        /// Datagrams, loss, reordering, jitter and where the missing went.
        Udp(UdpSummary) = "udp", udp,
        /// Bytes at each stage, where the time went, the checksum's verdict.
        File(FileSummary) = "file", file,
        /// Each end's bytes and iterations, and every flow operation's counts.
        Profile(ProfileSummary) = "profile", profile,
    }
);

kind_value!(
    /// A kind's figures of one flow over the window (`flows[].rr`, `.udp`).
    KindFlow in FlowResult, always &["rr", "udp"], {
        /// The flow's transactions.
        Rr(RrFlow) = "rr", rr,
        /// The flow's datagrams.
        Udp(UdpFlow) = "udp", udp,
    }
);

kind_value!(
    /// A kind's figures of one interval (`intervals[].rr`, `.udp`, `.file`).
    KindInterval in Interval, always &["rr", "udp", "file"], {
        /// Transactions and latency.
        Rr(RrInterval) = "rr", rr,
        /// Datagrams, loss and jitter.
        Udp(UdpInterval) = "udp", udp,
        /// Bytes and time at each stage.
        File(FileStages) = "file", file,
        /// Iterations, their time, and what the connecting ends read.
        Profile(ProfileInterval) = "profile", profile,
    }
);

/// Version of the JSON shape; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// One test's result.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// fathom's version.
    pub fathom_version: String,
    /// What was run, every option echoed.
    pub test: TestEcho,
    /// The hosts: the server first, then the clients.
    pub hosts: Vec<HostResult>,
    /// Figures over the measured window.
    pub summary: Summary,
    /// Per flow, over the measured window.
    pub flows: Vec<FlowResult>,
    /// Per interval, warm-up intervals marked `omitted`.
    pub intervals: Vec<Interval>,
    /// The lab's WAN emulator links, when the test ran between lab hosts of a lab that has them.
    pub wan: Vec<WanLinkResult>,
    /// IPsec on the lab links the test crossed (`lab up --ipsec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipsec: Option<IpsecResult>,
    /// Things the user should know, each saying what to do.
    pub warnings: Vec<String>,
    /// Set when the test failed; figures above hold what was measured until then.
    pub error: Option<String>,
    /// Per group of client hosts, when the hosts have groups (`--agents-from`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupResult>,
    /// The advisor's findings, ranked (with `--advise`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<Vec<Advice>>,
    /// With `--advise --verify-advice`: the top finding's change measured (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice_check: Option<AdviceCheck>,
}

impl crate::export::Document for Report {}

/// The test's parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TestEcho {
    /// Test kind ("stream", "rr", "crr", "udp_rr", "udp").
    pub kind: String,
    /// The server agent's name or address.
    pub agent: String,
    /// The client hosts; empty when the controller itself is the client.
    pub clients: Vec<String>,
    /// True when the agent ran inside this process on loopback.
    pub embedded_agent: bool,
    /// "forward", "reverse" or "bidir".
    pub direction: String,
    /// Flows per direction.
    pub parallel: u32,
    /// Measured window length for timed tests, seconds.
    pub duration_s: Option<f64>,
    /// Byte count for `-n` tests.
    pub bytes: Option<u64>,
    /// Warm-up excluded, seconds.
    pub omit_s: f64,
    /// Interval length, seconds.
    pub interval_s: f64,
    /// Bytes per write.
    pub write_size: u32,
    /// Bytes per read; 0 = each end's default (its L1 data cache size; a stream receiver on a
    /// path other than loopback reads at least 128K; see `hosts[].read_size`).
    pub read_size: u32,
    /// sendfile instead of write.
    pub zerocopy: bool,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// Requested congestion control.
    pub cc: Option<String>,
    /// Requested MSS.
    pub mss: Option<u32>,
    /// Requested SO_SNDBUF.
    pub sndbuf: Option<u32>,
    /// Requested SO_RCVBUF.
    pub rcvbuf: Option<u32>,
    /// The kind's own options (request/response: sizes and pacing; UDP stream: datagram size,
    /// batch and pacing), under the kind's key.
    #[serde(flatten, with = "kind::keyed")]
    pub section: Option<KindTest>,
    /// TLS tests: the options as run.
    pub tls: Option<tls::TlsTest>,
    /// TCP_QUICKACK re-armed after every read.
    pub quickack: bool,
    /// Workers spun instead of sleeping.
    pub busy_poll: bool,
    /// Wall-clock start, seconds since the Unix epoch.
    pub started_unix_s: f64,
}

/// The top finding's change checked by measurement (`fathom doctor --run N --verify`, or a
/// test's `--advise --verify-advice`): the test re-run with the change and as it was,
/// alternately, and the ratio of its main figure after to before with its interval.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct AdviceCheck {
    /// The finding checked (the top one), if any.
    pub finding: Option<String>,
    /// "rerun" (the option was measured), "applied" (`--apply`: the sysctl was set in the lab's
    /// namespaces and measured), "system" (a system change, printed only) or "nothing" (no
    /// change one re-run can check).
    pub outcome: String,
    /// The change: the fathom option and value, or the system command.
    pub change: String,
    /// The figure compared (the kind's main one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `--apply`: the lab namespaces the sysctl was set in (and set back in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_in: Vec<String>,
    /// The test as it was, as re-run.
    pub before_args: Vec<String>,
    /// The test with the change, as re-run.
    pub after_args: Vec<String>,
    /// The figure of each run without the change, in order.
    pub before: Vec<f64>,
    /// The figure of each run with it, in order.
    pub after: Vec<f64>,
    /// What the last run with the change really ran with: its report's test echo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_test: Option<TestEcho>,
    /// After / before, the means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// The ratio's confidence interval, low end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Its high end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// Its level, 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_level: Option<f64>,
}

/// Figures over the measured window.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Bytes moved and their rates, for all the flows.
    #[serde(flatten)]
    pub transfer: Transfer,
    /// Length of the receivers' measured window, seconds.
    pub seconds: f64,
    /// Total bytes received over the whole test / (last byte received − first byte sent), the
    /// cluster studies' aggregate, bits/s.
    pub aggregate_bits_per_second: f64,
    /// Bytes received while every flow was running / that span, bits/s.
    pub overlap_bits_per_second: f64,
    /// Several client hosts: latest minus earliest first byte of the hosts, µs, measured on the
    /// server's clock for forward tests (on the clients' clocks, offset-corrected, for reverse).
    pub start_skew_us: Option<f64>,
    /// Retransmitted segments in the window (sender sockets).
    pub retransmits: u64,
    /// Per direction, when the test ran both ways.
    pub directions: Vec<DirectionResult>,
    /// CPU of both ends over the window.
    pub cpu: CpuPair,
    /// CPU µs per KB (1024 bytes) received: netperf's service demand.
    pub service_demand_us_per_kb: ServiceDemand,
    /// Socket buffers requested and granted.
    pub buffers: Buffers,
    /// TCP internals summed or averaged over the flows.
    pub tcp: TcpSummary,
    /// The kind's own figures (request/response: transactions, latency and their cost; UDP
    /// stream: datagrams, loss and where the missing went; file copy: its stages and checksum),
    /// under the kind's key.
    #[serde(flatten, with = "kind::keyed")]
    pub section: Option<KindSummary>,
    /// TLS tests: what the sessions negotiated and what encryption cost.
    pub tls: Option<tls::TlsSummary>,
}

/// Bytes moved and their rates: the first six figures of the summary and of each flow (written
/// inline, as if they were the record's own fields).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Transfer {
    /// Throughput counted by the receiving application(s), bits/s.
    pub bits_per_second: f64,
    /// What the sender(s) wrote over their window, bits/s.
    pub sender_bits_per_second: f64,
    /// Bytes received in the window.
    pub bytes: u64,
    /// Bytes sent in the window.
    pub sender_bytes: u64,
    /// Bytes received over the whole test, warm-up and drain included.
    pub total_bytes_received: u64,
    /// Bytes sent over the whole test.
    pub total_bytes_sent: u64,
}

impl Transfer {
    /// `bytes` received and `sender_bytes` sent over `seconds` (at least the smallest positive
    /// number), with nothing before or after the window: the totals are the window's bytes.
    pub fn whole(bytes: u64, sender_bytes: u64, seconds: f64) -> Self {
        let seconds = seconds.max(f64::MIN_POSITIVE);
        Self {
            bits_per_second: bytes as f64 * 8.0 / seconds,
            sender_bits_per_second: sender_bytes as f64 * 8.0 / seconds,
            bytes,
            sender_bytes,
            total_bytes_received: bytes,
            total_bytes_sent: sender_bytes,
        }
    }
}

/// One direction of a bidirectional test.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct DirectionResult {
    /// "forward" (local sends) or "reverse" (agent sends).
    pub direction: String,
    /// Receiver's throughput, bits/s.
    pub bits_per_second: f64,
    /// Sender's throughput, bits/s.
    pub sender_bits_per_second: f64,
    /// Bytes received in the window.
    pub bytes: u64,
    /// Retransmits in the window.
    pub retransmits: u64,
}

/// One flow over the window.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FlowResult {
    /// Flow id.
    pub id: u32,
    /// "forward" or "reverse".
    pub direction: String,
    /// Bytes the flow moved and their rates.
    #[serde(flatten)]
    pub transfer: Transfer,
    /// Retransmits in the window.
    pub retransmits: u64,
    /// Smoothed RTT at the window's end, µs.
    pub rtt_us: u32,
    /// RTT variation, µs.
    pub rttvar_us: u32,
    /// Minimum RTT seen, µs.
    pub min_rtt_us: u32,
    /// Congestion window at the window's end, segments.
    pub cwnd: u32,
    /// The receive window the receiver advertised, as the sender saw it at the window's end
    /// (TCP_INFO snd_wnd), bytes: the window that bounds throughput at window / RTT.
    pub window: u32,
    /// Send MSS, bytes.
    pub mss: u32,
    /// Data segments received per ACK sent, at the receiver.
    pub data_segs_per_ack: f64,
    /// The kernel's delivery rate estimate at the window's end, bits/s.
    pub delivery_rate_bps: f64,
    /// Limited by the receive window, % of the window.
    pub rwnd_limited_pct: f64,
    /// Limited by the send buffer, % of the window.
    pub sndbuf_limited_pct: f64,
    /// Data in flight, % of the window.
    pub busy_pct: f64,
    /// Sender's SO_SNDBUF as granted.
    pub sndbuf: u32,
    /// Receiver's SO_RCVBUF as granted.
    pub rcvbuf: u32,
    /// Sender's SO_SNDBUF at the end.
    pub sndbuf_end: u32,
    /// Receiver's SO_RCVBUF at the end.
    pub rcvbuf_end: u32,
    /// Congestion control.
    pub cc: String,
    /// The kind's own figures of the flow (transactions, datagrams), under the kind's key.
    #[serde(flatten, with = "kind::keyed")]
    pub section: Option<KindFlow>,
    /// Sender's address.
    pub sender: String,
    /// Receiver's address.
    pub receiver: String,
}

/// One interval.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Interval {
    /// Start on the requested grid, seconds since the test's start.
    pub start: f64,
    /// End on the requested grid (a counted test's last one: when it ended), seconds.
    pub end: f64,
    /// When the snapshot opening the interval was really taken, seconds since the start.
    pub measured_start: f64,
    /// When the snapshot closing the interval was really taken; rates are over these.
    pub measured_end: f64,
    /// True for warm-up intervals (before `--omit` ended).
    pub omitted: bool,
    /// Receivers' throughput, bits/s.
    pub bits_per_second: f64,
    /// Senders' throughput, bits/s.
    pub sender_bits_per_second: f64,
    /// Bytes received.
    pub bytes: u64,
    /// Retransmits.
    pub retransmits: u64,
    /// Mean smoothed RTT of the senders at the interval's end, µs.
    pub rtt_us: f64,
    /// Total congestion window of the senders at the interval's end, segments.
    pub cwnd: u64,
    /// Busy CPU of the controller's host, %.
    pub cpu_local: f64,
    /// Busy CPU of the agent's host, %.
    pub cpu_remote: f64,
    /// Per flow (present when the test has at most [`PER_FLOW_INTERVALS_MAX`] flows).
    pub flows: Vec<FlowInterval>,
    /// The kind's own figures of the interval (transactions and latency; datagrams, loss and
    /// jitter; bytes and time at each stage of a copy), under the kind's key.
    #[serde(flatten, with = "kind::keyed")]
    pub section: Option<KindInterval>,
}

/// Per-flow interval records are kept up to this many flows.
pub const PER_FLOW_INTERVALS_MAX: usize = 64;

/// One flow in one interval.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FlowInterval {
    /// Flow id.
    pub id: u32,
    /// Receiver's throughput, bits/s.
    pub bits_per_second: f64,
    /// Sender's throughput, bits/s.
    pub sender_bits_per_second: f64,
    /// Bytes received.
    pub bytes: u64,
    /// Retransmits.
    pub retransmits: u64,
    /// Smoothed RTT at the interval's end, µs.
    pub rtt_us: u32,
    /// RTT variation at the interval's end, µs.
    pub rttvar_us: u32,
    /// Congestion window at the interval's end.
    pub cwnd: u32,
    /// The window the receiver advertised at the interval's end, bytes.
    pub window: u32,
    /// The kernel's delivery rate estimate at the interval's end, bits/s.
    pub delivery_rate_bps: f64,
    /// Segments the sender sent (data and ACKs) in the interval.
    pub segs_out: u64,
    /// Segments the sender sent that carried data.
    pub data_segs_out: u64,
    /// Data segments the receiver got per ACK it sent.
    pub data_segs_per_ack: f64,
    /// Share of the interval the sender was limited by the receive window, %.
    pub rwnd_limited_pct: f64,
    /// Share of the interval the sender was limited by its send buffer, %.
    pub sndbuf_limited_pct: f64,
    /// Share of the interval the sender had data in flight, %.
    pub busy_pct: f64,
}
