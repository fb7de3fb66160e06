//! The UDP stream kind's options (`KindPlan::Udp`) and their bounds.
//!
//! Every datagram starts with a header, as much of it as fits: its sequence number (8 bytes,
//! little-endian, from 0 per flow), then the sender's CLOCK_MONOTONIC at sending, ns (8 bytes: the controller's
//! clock offset estimate relates the hosts' monotonic clocks, for the one-way delay).
//! Datagrams under 8 bytes carry no sequence number (the receiver counts them only); under 16,
//! no timestamp (no jitter).

use crate::bounds::{fail, PlanError, MAX_IO, MAX_RATE, MAX_UDP};
use serde::{Deserialize, Serialize};

/// Bytes of the sequence number at the start of a datagram.
pub const SEQ_BYTES: usize = 8;
/// Bytes of the header (sequence number and send time).
pub const HEADER_BYTES: usize = 16;
/// Most datagrams per sendmmsg/recvmmsg call.
pub const MAX_BATCH: u32 = 1024;
/// With GRO, messages per recvmmsg at most, each with room for the largest UDP message.
pub const GRO_BATCH: u32 = 16;
/// Most datagrams the kernel cuts one UDP_SEGMENT message into (the kernel's UDP_MAX_SEGMENTS
/// before Linux 6.7; later kernels allow 128).
pub const GSO_MAX_SEGMENTS: u32 = 64;
/// Per message of a flow's sendmmsg/recvmmsg arrays: its header, iovec, control room and what
/// the receiver notes of it (208 bytes and a little), rounded up.
const PER_MESSAGE_MEMORY: u64 = 256;
/// The receiver's sequence window per flow (a bit per sequence number, 2^16 of them).
const WINDOW_MEMORY: u64 = 8 << 10;
/// Per datagram queued by a sender: its sequence number and flag.
const PER_QUEUED_MEMORY: u64 = 16;

/// The shape of a UDP stream.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct UdpOptions {
    /// Payload bytes per datagram.
    pub size: u32,
    /// Datagrams per sendmmsg/recvmmsg call (1: one send/recv per datagram).
    pub batch: u32,
    /// Paced: payload bits per second in all, spread over the flows.
    pub rate_bps: Option<f64>,
    /// Paced: datagrams per second in all, spread over the flows.
    pub pps: Option<f64>,
    /// Blast: the receiver reads and drops in batches, counting datagrams and bytes only (no
    /// sequence accounting, no receive stamps): the transmit ceiling alone.
    pub blast: bool,
    /// Test-only faults the sender injects, to check the receiver's accounting.
    pub faults: Option<UdpFaults>,
    /// UDP_SEGMENT on send (each message a run of datagrams the kernel cuts apart) and UDP_GRO
    /// on receive (the kernel may hand up a run as one message); `batch` then counts messages.
    #[serde(default)]
    pub gso: bool,
}

/// Faults a sender injects (test-only): counted by the receiver as loss, duplicates and
/// reordering exactly.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpFaults {
    /// Skip (count as sent, never send) every Nth datagram.
    pub drop_every: Option<u32>,
    /// Send every Nth datagram twice.
    pub duplicate_every: Option<u32>,
    /// Hold back every Nth datagram and send it after the next one (a reorder distance of 1).
    pub swap_every: Option<u32>,
}

impl UdpOptions {
    /// True when the receiver accounts sequence numbers (not in blast mode, and datagrams
    /// large enough to carry one).
    pub fn sequenced(&self) -> bool {
        !self.blast && self.size as usize >= SEQ_BYTES
    }

    /// True when the receiver measures jitter (sequenced, and room for the send time).
    pub fn stamped(&self) -> bool {
        self.sequenced() && self.size as usize >= HEADER_BYTES
    }

    /// Datagrams per sendmmsg message: 1, or with GSO as many as one message can hold.
    pub fn per_message(&self) -> u32 {
        match self.gso {
            true => (MAX_UDP / self.size.max(1)).clamp(1, GSO_MAX_SEGMENTS),
            false => 1,
        }
    }

    /// (messages per recvmmsg, bytes of room for each): a datagram each, or with GRO the
    /// largest message the kernel may hand up.
    pub fn receive_slots(&self) -> (u32, u32) {
        match self.gso {
            true => (self.batch.clamp(1, GRO_BATCH), MAX_UDP + 1),
            false => (self.batch.max(1), self.size),
        }
    }

    /// Bytes a receiver reads into per call (`TestPlan::read_size`).
    pub fn read_bytes(&self) -> u32 {
        let (n, slot) = self.receive_slots();
        n.saturating_mul(slot).max(1)
    }

    /// Bytes a sender writes from per call (`TestPlan::write_size`).
    pub fn write_bytes(&self) -> u32 {
        self.size
            .saturating_mul(self.batch)
            .saturating_mul(self.per_message())
            .max(1)
    }

    /// Bytes one flow holds of its own besides the worker's buffers: a sender's datagram slots
    /// (size x batch, x segments with GSO: 64 MB at `--size 65507 --batch 1024`), its message
    /// array and queue; a receiver's message array and sequence window. Each flow is one or the
    /// other on an end, so this is the larger.
    pub fn flow_memory(&self) -> u64 {
        let batch = u64::from(self.batch.max(1));
        let datagrams = batch * u64::from(self.per_message());
        let sender = datagrams * u64::from(self.size)
            + batch * PER_MESSAGE_MEMORY
            + datagrams * PER_QUEUED_MEMORY;
        let receiver = u64::from(self.receive_slots().0) * PER_MESSAGE_MEMORY + WINDOW_MEMORY;
        sender.max(receiver)
    }

    /// Datagrams per second in all, if paced.
    pub fn datagrams_per_second(&self) -> Option<f64> {
        self.pps.or_else(|| {
            self.rate_bps
                .map(|r| r / (8.0 * f64::from(self.size.max(1))))
        })
    }
}

fn positive_rate(field: &'static str, r: Option<f64>, max: f64) -> Result<(), PlanError> {
    match r {
        Some(r) if !(r.is_finite() && r > 0.0 && r <= max) => fail(
            field,
            format!("{r} is not a rate above 0 and at most {max}"),
        ),
        _ => Ok(()),
    }
}

impl UdpOptions {
    /// Checks the bounds.
    pub(crate) fn validate(&self) -> Result<(), PlanError> {
        let u = self;
        if u.size == 0 || u.size > MAX_UDP {
            return fail(
                "udp.size",
                format!("{} bytes is outside 1..={MAX_UDP}", u.size),
            );
        }
        if u.batch == 0
            || u.batch > MAX_BATCH
            || u64::from(u.size) * u64::from(u.batch) * u64::from(u.per_message()) > MAX_IO.into()
        {
            return fail(
                "udp.batch",
                format!(
                    "{} is outside 1..={MAX_BATCH} (and size x batch, x segments with GSO, at most 64M)",
                    u.batch
                ),
            );
        }
        if u.rate_bps.is_some() && u.pps.is_some() {
            return fail(
                "udp.pps",
                "pace by bit rate or by datagram rate, not both".into(),
            );
        }
        positive_rate("udp.rate_bps", u.rate_bps, MAX_RATE * 8.0 * 65_536.0)?;
        positive_rate("udp.pps", u.pps, MAX_RATE)?;
        if let Some(f) = &u.faults {
            for (field, n) in [
                ("udp.faults.drop_every", f.drop_every),
                ("udp.faults.duplicate_every", f.duplicate_every),
                ("udp.faults.swap_every", f.swap_every),
            ] {
                if n.is_some_and(|n| n < 2) {
                    return fail(field, "must be at least 2".into());
                }
            }
        }
        Ok(())
    }
}

/// One UDP stream flow's cumulative counters at a snapshot (`FlowSnapshot::udp`); each end fills
/// its own: the sender `datagrams_sent` and its calls, the receiver the rest.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpCounters {
    /// Datagrams the sender sent (its injected test drops included).
    pub datagrams_sent: u64,
    /// Datagrams the receiver read, duplicates included.
    pub datagrams: u64,
    /// Sequence numbers skipped and not (yet) filled in by a late datagram.
    pub lost: u64,
    /// Datagrams read a second time.
    pub duplicates: u64,
    /// Datagrams that arrived after a later one.
    pub reordered: u64,
    /// The largest reorder distance so far (sequence numbers between the highest seen and a
    /// late arrival); a gauge.
    pub reorder_max: u64,
    /// The RFC 3550 interarrival jitter estimate now, ns; a gauge.
    pub jitter_ns: u64,
    /// System calls that moved datagrams (sendmmsg/recvmmsg, or send/recv).
    pub calls: u64,
    /// Datagrams the kernel dropped because this socket's receive buffer was full (SO_RXQ_OVFL).
    pub rxq_overflow: u64,
    /// Messages those calls moved: with GSO/GRO each may hold several datagrams; without, one.
    pub messages: u64,
    /// Sum of the stamped datagrams' transit times (receive stamp minus send stamp, ns, each on
    /// its host's CLOCK_MONOTONIC): less the hosts' clock offset, the one-way delay.
    pub transit_sum_ns: i64,
    /// Datagrams in `transit_sum_ns`.
    pub transits: u64,
}

/// The host's UDP counters from /proc/net/snmp (cumulative, all sockets of the host).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpHostCounters {
    /// Udp InErrors: datagrams the host could not deliver (buffer overflows included).
    pub in_errors: u64,
    /// Udp RcvbufErrors: datagrams dropped because a receive buffer was full.
    pub rcvbuf_errors: u64,
    /// Udp SndbufErrors: datagrams dropped because a send buffer was full.
    pub sndbuf_errors: u64,
}
