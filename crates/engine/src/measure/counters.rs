//! Per-flow counters: written by the flow's worker (single writer, plain stores), read by the
//! sampler at interval boundaries. Flows never share a cache line, and everything a snapshot
//! reads of a flow that publishes no kind counters is in the flow's first line, so the sampler
//! misses one line per flow, not two. A kind's own counters go through [`Publish`]: one slot
//! for every kind, never a field per kind here.

use super::published::{Publish, Published};
use fathom_proto::sample::FlowSnapshot;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

/// `u64::MAX` marks "no byte yet" in the time fields.
const NONE: u64 = u64::MAX;

/// The live counters of one flow, two cache lines. `repr(C)` keeps the declared order: the
/// first 53 bytes (to `publishes`) are the snapshot's, the rest is read only when the flow
/// publishes a kind's counters (the slot's state and header share the second line; the
/// counters' words are the kind's own allocation).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct FlowStats {
    sent: AtomicU64,
    received: AtomicU64,
    transactions: AtomicU64,
    lost: AtomicU64,
    first_ns: AtomicU64,
    last_ns: AtomicU64,
    fd: AtomicI32,
    /// Whether `published` holds counters: read first, so that a flow without any costs the
    /// sampler its first line only.
    publishes: AtomicBool,
    /// SO_SNDBUF and SO_RCVBUF as granted to the flow's first connection, then as its latest
    /// connection had them at its close (kinds whose connections open mid-test; 0: none yet).
    buffers: [AtomicU32; 4],
    /// A kind's own counters published whole ([`Publish`]), made at their first publication.
    published: OnceLock<Published>,
}

impl Default for FlowStats {
    fn default() -> Self {
        FlowStats {
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            transactions: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            first_ns: AtomicU64::new(NONE),
            last_ns: AtomicU64::new(NONE),
            fd: AtomicI32::new(-1),
            publishes: AtomicBool::new(false),
            buffers: Default::default(),
            published: OnceLock::new(),
        }
    }
}

impl FlowStats {
    /// Publishes the cumulative bytes written.
    #[inline]
    pub fn set_sent(&self, v: u64) {
        self.sent.store(v, Relaxed)
    }
    /// Publishes the cumulative bytes read.
    #[inline]
    pub fn set_received(&self, v: u64) {
        self.received.store(v, Relaxed)
    }
    /// Publishes the cumulative transactions.
    #[inline]
    pub fn set_transactions(&self, v: u64) {
        self.transactions.store(v, Relaxed)
    }
    /// Publishes the cumulative lost transactions.
    #[inline]
    pub fn set_lost(&self, v: u64) {
        self.lost.store(v, Relaxed)
    }
    /// Adds to the transactions (for flows that share one counter, such as accepted
    /// connections).
    #[inline]
    pub fn add_transactions(&self, n: u64) {
        self.transactions.fetch_add(n, Relaxed);
    }
    /// Adds to the bytes written.
    #[inline]
    pub fn add_sent(&self, n: u64) {
        self.sent.fetch_add(n, Relaxed);
    }
    /// Adds to the bytes read.
    #[inline]
    pub fn add_received(&self, n: u64) {
        self.received.fetch_add(n, Relaxed);
    }
    /// Transactions so far.
    pub fn transactions(&self) -> u64 {
        self.transactions.load(Relaxed)
    }
    /// Records payload activity at `now` (first and last byte times).
    #[inline]
    pub fn touch(&self, now: u64) {
        if self.first_ns.load(Relaxed) == NONE {
            self.first_ns.store(now, Relaxed);
        }
        self.last_ns.store(now, Relaxed);
    }
    /// Records when the flow's first payload arrived (a kernel stamp, before any read).
    pub fn set_first(&self, at: u64) {
        self.first_ns.store(at, Relaxed);
    }
    /// The socket the sampler may read TCP_INFO from (-1: none).
    pub fn set_fd(&self, fd: i32) {
        self.fd.store(fd, Relaxed)
    }
    /// See [`set_fd`](Self::set_fd).
    pub fn fd(&self) -> i32 {
        self.fd.load(Relaxed)
    }
    /// Publishes a connection's SO_SNDBUF and SO_RCVBUF as granted at its opening: kept from
    /// the flow's first connection, and as its end figures until a close publishes those.
    pub fn set_buffers_granted(&self, (send, recv): (u32, u32)) {
        if self.buffers[0].load(Relaxed) == 0 && self.buffers[1].load(Relaxed) == 0 {
            self.buffers[0].store(send, Relaxed);
            self.buffers[1].store(recv, Relaxed);
        }
        self.set_buffers_end((send, recv));
    }
    /// Publishes a connection's SO_SNDBUF and SO_RCVBUF as they stood at its close.
    pub fn set_buffers_end(&self, (send, recv): (u32, u32)) {
        self.buffers[2].store(send, Relaxed);
        self.buffers[3].store(recv, Relaxed);
    }
    /// The published buffers, granted then at the end, as (send, recv) pairs; none when the
    /// flow published none (its sockets were set up before the start and are read there).
    pub fn buffers(&self) -> Option<((u32, u32), (u32, u32))> {
        let b: [u32; 4] = std::array::from_fn(|i| self.buffers[i].load(Relaxed));
        (b != [0; 4]).then_some(((b[0], b[1]), (b[2], b[3])))
    }
    /// Time of the first payload byte, monotonic ns.
    pub fn first_ns(&self) -> Option<u64> {
        Some(self.first_ns.load(Relaxed)).filter(|&v| v != NONE)
    }
    /// Time of the last payload byte, monotonic ns.
    pub fn last_ns(&self) -> Option<u64> {
        Some(self.last_ns.load(Relaxed)).filter(|&v| v != NONE)
    }
    /// Publishes a kind's own counters whole (its [`Publish`] says how); a flow publishes one
    /// type, the first it publishes.
    pub fn publish<P: Publish>(&self, p: &P) {
        self.published.get_or_init(Published::new::<P>).store(p);
        // Stored once only: the flag is on the snapshot's line.
        if !self.publishes.load(Relaxed) {
            self.publishes.store(true, Relaxed);
        }
    }

    /// The counters now, without TCP_INFO.
    pub fn snapshot(&self) -> FlowSnapshot {
        FlowSnapshot {
            sent: self.sent.load(Relaxed),
            received: self.received.load(Relaxed),
            transactions: self.transactions.load(Relaxed),
            lost: self.lost.load(Relaxed),
            tcp: None,
            kind: if self.publishes.load(Relaxed) {
                self.published.get().map(|p| Box::new(p.load()))
            } else {
                None
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::profile::ProfileCounters;
    use fathom_proto::sample::FlowKindCounters;
    use fathom_proto::udp::UdpCounters;
    use std::mem::{offset_of, size_of};

    #[test]
    fn a_snapshot_reads_one_cache_line() {
        assert_eq!(std::mem::align_of::<FlowStats>(), 64);
        assert!(offset_of!(FlowStats, sent) == 0 && offset_of!(FlowStats, lost) < 64);
        assert!(offset_of!(FlowStats, fd) + 4 <= 64);
        assert!(offset_of!(FlowStats, publishes) < 64);
        assert!(offset_of!(FlowStats, buffers) >= 53);
        assert_eq!(size_of::<FlowStats>(), 128);
    }

    #[test]
    fn a_flow_publishes_the_first_type_it_publishes() {
        let s = FlowStats::default();
        assert_eq!(s.snapshot().kind, None);
        let mut counts = ProfileCounters::default();
        counts.ops[1].bytes = 9;
        s.publish(&counts);
        assert_eq!(
            s.snapshot().kind.as_deref(),
            Some(&FlowKindCounters::Profile(counts))
        );
        s.publish(&UdpCounters {
            datagrams: 7,
            ..Default::default()
        });
        assert_eq!(
            s.snapshot().kind.as_deref(),
            Some(&FlowKindCounters::Profile(counts))
        );
    }
}
