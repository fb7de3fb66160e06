//! Per-flow counters: written by the flow's worker (single writer, plain stores), read by the
//! sampler at interval boundaries. Flows never share a cache line, and everything a snapshot
//! reads of a flow that keeps no kind counters is in the flow's first line, so the sampler
//! misses one line per flow, not four.

use super::published::{Publish, Published};
use fathom_proto::file::FileCounters;
use fathom_proto::sample::{FlowKindCounters, FlowSnapshot};
use fathom_proto::udp::UdpCounters;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;

/// `u64::MAX` marks "no byte yet" in the time fields.
const NONE: u64 = u64::MAX;

/// Bits of [`FlowStats`]' `kinds`: which kind counters the flow has published.
const UDP: u8 = 1;
const FILE: u8 = 2;
const PUBLISHED: u8 = 4;

/// The live counters of one flow. `repr(C)` keeps the declared order: the first 53 bytes
/// (to `kinds`) are the snapshot's, the rest is read only for the kinds that publish it.
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
    /// [`UDP`], [`FILE`], [`PUBLISHED`]: the kind counters published so far.
    kinds: AtomicU8,
    /// SO_SNDBUF and SO_RCVBUF as granted to the flow's first connection, then as its latest
    /// connection had them at its close (kinds whose connections open mid-test; 0: none yet).
    buffers: [AtomicU32; 4],
    /// A UDP stream flow's counters, published whole by its flow ([`FlowStats::set_udp`]).
    udp: [AtomicU64; UDP_CELLS],
    /// A file flow's counters, published whole by its flow ([`FlowStats::set_file`]); `NONE`
    /// marks an absent optional one, and `verified` is 0 (not yet), 1 (match) or 2 (mismatch).
    file: [AtomicU64; FILE_CELLS],
    /// A kind's own counters published whole ([`Publish`]), made at their first publication.
    published: OnceLock<Box<Published>>,
}

/// How many counters a [`UdpCounters`] holds.
const UDP_CELLS: usize = 12;

/// How many counters a [`FileCounters`] holds.
const FILE_CELLS: usize = 6;

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
            kinds: AtomicU8::new(0),
            buffers: Default::default(),
            udp: Default::default(),
            file: Default::default(),
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
    /// Publishes a UDP stream flow's counters.
    pub fn set_udp(&self, u: &UdpCounters) {
        let values = [
            u.datagrams_sent,
            u.datagrams,
            u.lost,
            u.duplicates,
            u.reordered,
            u.reorder_max,
            u.jitter_ns,
            u.calls,
            u.rxq_overflow,
            u.messages,
            u.transit_sum_ns as u64,
            u.transits,
        ];
        for (cell, v) in self.udp.iter().zip(values) {
            cell.store(v, Relaxed);
        }
        self.mark(UDP);
    }
    /// Publishes a file flow's counters.
    pub fn set_file(&self, f: &FileCounters) {
        let values = [
            f.disk_bytes,
            f.disk_ns,
            f.net_ns,
            f.sync_ns,
            f.cached_bytes.unwrap_or(NONE),
            f.verified.map_or(0, |ok| if ok { 1 } else { 2 }),
        ];
        for (cell, v) in self.file.iter().zip(values) {
            cell.store(v, Relaxed);
        }
        self.mark(FILE);
    }
    /// Publishes a kind's own counters whole (its [`Publish`] says how).
    pub fn publish<P: Publish>(&self, p: &P) {
        self.published
            .get_or_init(|| Box::new(Published::new::<P>()))
            .store(p);
        self.mark(PUBLISHED);
    }
    /// Marks the `kind` counters published (the store only once: the line is the snapshot's).
    fn mark(&self, kind: u8) {
        if self.kinds.load(Relaxed) & kind == 0 {
            self.kinds.fetch_or(kind, Relaxed);
        }
    }
    /// A kind's own counters now, if the flow publishes them.
    fn published_snapshot(&self) -> Option<FlowKindCounters> {
        let published = self.kinds.load(Relaxed) & PUBLISHED != 0;
        self.published.get().filter(|_| published).map(|p| p.load())
    }
    /// The file counters now, if the flow publishes them.
    fn file_snapshot(&self) -> Option<FileCounters> {
        (self.kinds.load(Relaxed) & FILE != 0).then(|| {
            let v: [u64; FILE_CELLS] = std::array::from_fn(|i| self.file[i].load(Relaxed));
            FileCounters {
                disk_bytes: v[0],
                disk_ns: v[1],
                net_ns: v[2],
                sync_ns: v[3],
                cached_bytes: Some(v[4]).filter(|&c| c != NONE),
                verified: (v[5] != 0).then_some(v[5] == 1),
            }
        })
    }
    /// The UDP stream counters now, if the flow publishes them.
    fn udp_snapshot(&self) -> Option<UdpCounters> {
        (self.kinds.load(Relaxed) & UDP != 0).then(|| {
            let v: [u64; UDP_CELLS] = std::array::from_fn(|i| self.udp[i].load(Relaxed));
            UdpCounters {
                datagrams_sent: v[0],
                datagrams: v[1],
                lost: v[2],
                duplicates: v[3],
                reordered: v[4],
                reorder_max: v[5],
                jitter_ns: v[6],
                calls: v[7],
                rxq_overflow: v[8],
                messages: v[9],
                transit_sum_ns: v[10] as i64,
                transits: v[11],
            }
        })
    }

    /// The counters now, without TCP_INFO.
    pub fn snapshot(&self) -> FlowSnapshot {
        FlowSnapshot {
            sent: self.sent.load(Relaxed),
            received: self.received.load(Relaxed),
            transactions: self.transactions.load(Relaxed),
            lost: self.lost.load(Relaxed),
            tcp: None,
            kind: if self.kinds.load(Relaxed) == 0 {
                None
            } else {
                self.udp_snapshot()
                    .map(FlowKindCounters::Udp)
                    .or_else(|| self.file_snapshot().map(FlowKindCounters::File))
                    .or_else(|| self.published_snapshot())
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::profile::ProfileCounters;
    use std::mem::offset_of;

    #[test]
    fn a_snapshot_reads_one_cache_line() {
        assert_eq!(std::mem::align_of::<FlowStats>(), 64);
        assert!(offset_of!(FlowStats, sent) == 0 && offset_of!(FlowStats, lost) < 64);
        assert!(offset_of!(FlowStats, fd) + 4 <= 64);
        assert!(offset_of!(FlowStats, kinds) < 64);
        assert!(offset_of!(FlowStats, buffers) >= 53);
    }

    #[test]
    fn kind_counters_appear_once_published() {
        let s = FlowStats::default();
        assert_eq!(s.snapshot().kind, None);
        let u = UdpCounters {
            datagrams: 7,
            transit_sum_ns: -3,
            ..Default::default()
        };
        s.set_udp(&u);
        assert_eq!(s.snapshot().kind, Some(FlowKindCounters::Udp(u)));
        let p = FlowStats::default();
        let mut counts = ProfileCounters::default();
        counts.ops[1].bytes = 9;
        p.publish(&counts);
        assert_eq!(p.snapshot().kind, Some(FlowKindCounters::Profile(counts)));
        let f = FlowStats::default();
        let file = FileCounters {
            disk_bytes: 5,
            cached_bytes: None,
            verified: Some(false),
            ..Default::default()
        };
        f.set_file(&file);
        assert_eq!(f.snapshot().kind, Some(FlowKindCounters::File(file)));
    }
}
