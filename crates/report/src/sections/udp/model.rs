//! The UDP stream section of a report: the `udp` objects of `test`, `summary`, each flow and
//! each interval, present for the datagram stream kinds and `null` otherwise.
//!
//! Datagrams are counted at the receiver (duplicates included; `duplicates` says how many of
//! them were), with the sender's count beside. `lost`, `duplicates`, `reordered` and jitter
//! need the sequence number and send time each datagram carries: they are `null` for datagrams
//! under 8 bytes (no sequence number) and jitter under 16 (no send time), and all `null` with
//! `--blast` (the receiver only counts).

use crate::model::ServiceDemand;
use serde::{Deserialize, Serialize};

/// The UDP stream options, as run (`test.udp`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct UdpTest {
    /// Payload bytes per datagram.
    pub size: u32,
    /// Datagrams per sendmmsg/recvmmsg call asked for.
    pub batch: u32,
    /// Paced at this many payload bits per second in all (`--rate`).
    pub rate_bps: Option<f64>,
    /// Paced at this many datagrams per second in all (`--pps`, or derived from `--rate`).
    pub pps: Option<f64>,
    /// Datagrams requested with `-n`.
    pub datagrams: Option<u64>,
    /// Blast: the receiver counted datagrams and bytes only (`--blast`).
    pub blast: bool,
    /// GSO (`--gso`): UDP_SEGMENT on send, UDP_GRO on receive; `batch` counts messages.
    #[serde(default)]
    pub gso: bool,
}

/// UDP stream figures over the measured window (`summary.udp`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct UdpSummary {
    /// Datagrams the receivers read in the window, duplicates included.
    pub datagrams: u64,
    /// Datagrams per second read.
    pub datagrams_per_second: f64,
    /// Datagrams the senders sent in the window.
    pub sender_datagrams: u64,
    /// Datagrams per second sent.
    pub sender_datagrams_per_second: f64,
    /// Sequence numbers never received (gaps), in the window.
    pub lost: Option<u64>,
    /// `lost` as a percentage of the datagrams expected (received + lost - duplicates).
    pub lost_percent: Option<f64>,
    /// Datagrams received twice or more.
    pub duplicates: Option<u64>,
    /// Datagrams that arrived after a later one.
    pub reordered: Option<u64>,
    /// The largest reorder distance over the whole run (sequence numbers).
    pub reorder_max_distance: Option<u64>,
    /// RFC 3550 interarrival jitter at the window's end, µs (mean over the flows).
    pub jitter_us: Option<f64>,
    /// Datagrams per system call achieved: sender (sendmmsg) and receiver (recvmmsg).
    pub datagrams_per_call: PerEnd,
    /// System calls per second that moved datagrams (sendmmsg, recvmmsg).
    #[serde(default)]
    pub calls_per_second: PerEnd,
    /// Datagrams per message: 1 without GSO; with it, the datagrams each message handed to
    /// the kernel held (sender, UDP_SEGMENT) and each message read held (receiver, UDP_GRO).
    #[serde(default)]
    pub datagrams_per_message: PerEnd,
    /// Mean one-way delay of the stamped datagrams; null without send stamps.
    #[serde(default)]
    pub one_way_delay: Option<OneWayDelay>,
    /// Busy CPU ns per datagram received on each host.
    pub cpu_ns_per_datagram: ServiceDemand,
    /// Where the datagrams the sender sent and the receiver never read went.
    pub missing: Missing,
}

/// A figure at each end of the datagram stream.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PerEnd {
    /// At the sender.
    pub sender: f64,
    /// At the receiver.
    pub receiver: f64,
}

/// The mean one-way delay (receive stamp minus send stamp), and how far to trust it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct OneWayDelay {
    /// Mean over the window's stamped datagrams, µs.
    pub mean_us: f64,
    /// `shared`: sender and receiver read one clock (one host, or namespaces of one kernel
    /// with the controller in the same process); `estimated`: corrected by the controller's
    /// clock offset estimates, within `error_us`.
    pub clock: String,
    /// The bound on the offset's error (half the best clock probe's round trip at each end,
    /// summed); 0 for a shared clock.
    pub error_us: f64,
}

/// The sender's count minus the receiver's (duplicates not counted), split by where the kernel
/// says datagrams were dropped. Host counters count every UDP socket of the host, so other
/// traffic can add to them; each cause is capped at what is left to explain.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Missing {
    /// Sent minus received in the window (not below 0), without those that arrived after it.
    pub datagrams: u64,
    /// Sent in the window but read after it closed (in flight or queued at its edge): they
    /// arrived, as the whole test's totals show, so they are not missing.
    #[serde(default)]
    pub in_flight: u64,
    /// Dropped because a receiving socket's buffer was full (SO_RXQ_OVFL of the test's own
    /// sockets, else the receiving host's Udp RcvbufErrors); with GSO the kernel counts
    /// messages, each taken as the senders' mean datagrams per message.
    pub receive_buffer: u64,
    /// Dropped because a send buffer was full (the sending host's Udp SndbufErrors).
    pub send_buffer: u64,
    /// Dropped on the path by the lab's WAN emulator (its drop counters over the test, on the
    /// links the datagrams crossed); 0 without one.
    #[serde(default)]
    pub path: u64,
    /// The rest: on a path fathom cannot see into.
    pub unexplained: u64,
    /// The receiving sockets' SO_RXQ_OVFL drops in the window (messages, with GSO).
    pub socket_rxq_overflow: u64,
    /// The receiving host's Udp RcvbufErrors in the window (all sockets).
    pub host_rcvbuf_errors: u64,
    /// The receiving host's Udp InErrors in the window (all sockets).
    pub host_in_errors: u64,
    /// The sending host's Udp SndbufErrors in the window (all sockets).
    pub host_sndbuf_errors: u64,
}

/// One flow's datagrams over the window (`flows[].udp`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct UdpFlow {
    /// Datagrams read, duplicates included.
    pub datagrams: u64,
    /// Datagrams per second read.
    pub datagrams_per_second: f64,
    /// Datagrams the sender sent.
    pub sender_datagrams: u64,
    /// Sequence gaps.
    pub lost: Option<u64>,
    /// Datagrams received twice or more.
    pub duplicates: Option<u64>,
    /// Late arrivals.
    pub reordered: Option<u64>,
    /// The largest reorder distance over the whole run.
    pub reorder_max_distance: Option<u64>,
    /// Jitter at the window's end, µs.
    pub jitter_us: Option<f64>,
    /// SO_RXQ_OVFL drops of the receiving socket in the window.
    pub socket_rxq_overflow: u64,
}

/// One interval's datagrams (`intervals[].udp`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct UdpInterval {
    /// Datagrams read in the interval, duplicates included.
    #[serde(default)]
    pub datagrams: u64,
    /// Datagrams per second read.
    pub datagrams_per_second: f64,
    /// Datagrams per second sent.
    pub sender_datagrams_per_second: f64,
    /// Sequence gaps.
    pub lost: Option<u64>,
    /// Datagrams received twice or more.
    pub duplicates: Option<u64>,
    /// Late arrivals.
    pub reordered: Option<u64>,
    /// Jitter at the interval's end, µs (mean over the flows).
    pub jitter_us: Option<f64>,
}
