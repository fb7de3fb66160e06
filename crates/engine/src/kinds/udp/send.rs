//! The sending side of a UDP stream flow: numbered, timestamped datagrams in sendmmsg batches,
//! paced when the plan sets a rate, with the test-only faults injected here.

use super::mmsg::Batch;
use crate::clock;
use crate::kind::{Flow, Io, Step};
use crate::kinds::pacer::Pacer;
use crate::measure::counters::FlowStats;
use fathom_proto::udp::{UdpCounters, UdpFaults, UdpOptions, HEADER_BYTES, SEQ_BYTES};
use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// System calls per run before yielding to the worker's other flows.
pub const CALLS_PER_TURN: u64 = 64;

/// A datagram waiting to go: its sequence number, and whether it counts as sent (a duplicate
/// the faults add does not).
type Queued = (u64, bool);

/// One flow's sender.
pub struct Sender {
    sock: mio::net::UdpSocket,
    stats: Arc<FlowStats>,
    pacer: Pacer,
    size: usize,
    headers: Vec<[u8; HEADER_BYTES]>,
    mmsg: Batch,
    queue: VecDeque<Queued>,
    faults: UdpFaults,
    held: Option<u64>,
    seq: u64,
    bytes: u64,
    counters: UdpCounters,
}

impl Sender {
    /// The sender of a flow that is `index` of `flows` sending ones, `count` datagrams (or
    /// until the time limit).
    pub fn new(
        sock: mio::net::UdpSocket,
        stats: Arc<FlowStats>,
        o: &UdpOptions,
        count: Option<u64>,
        (index, flows): (u64, u64),
    ) -> Sender {
        let batch = o.batch.max(1) as usize;
        let pacer = Pacer::schedule(
            count.unwrap_or(u64::MAX),
            o.datagrams_per_second(),
            usize::MAX,
            index,
            flows,
        );
        Sender {
            sock,
            stats,
            pacer,
            size: o.size as usize,
            headers: vec![[0; HEADER_BYTES]; batch],
            mmsg: Batch::new(batch),
            queue: VecDeque::with_capacity(batch + 2),
            faults: o.faults.unwrap_or_default(),
            held: None,
            seq: 0,
            bytes: 0,
            counters: UdpCounters::default(),
        }
    }

    /// Queues what the pacer allows now, up to a batch.
    fn fill(&mut self, now: u64) {
        while self.queue.len() < self.headers.len() {
            if self.pacer.issue(now).is_none() {
                break;
            }
            self.pacer.completed();
            self.seq += 1;
            self.inject(self.seq - 1);
        }
        if self.pacer.finished() {
            if let Some(h) = self.held.take() {
                self.queue.push_back((h, true));
            }
        }
    }

    /// Queues datagram `s`, with the test-only faults applied.
    fn inject(&mut self, s: u64) {
        let f = self.faults;
        let hit = |every: Option<u32>| every.is_some_and(|n| (s + 1).is_multiple_of(u64::from(n)));
        if hit(f.drop_every) {
            self.counters.datagrams_sent += 1;
            return;
        }
        if hit(f.swap_every) && self.held.is_none() {
            self.held = Some(s);
            return;
        }
        self.queue.push_back((s, true));
        if hit(f.duplicate_every) {
            self.queue.push_back((s, false));
        }
        if let Some(h) = self.held.take() {
            self.queue.push_back((h, true));
        }
    }

    /// Sends one batch from the queue; how many went (0: the socket is full).
    fn transmit(&mut self, io: &Io<'_>, now: u64) -> io::Result<usize> {
        let k = self.queue.len().min(self.headers.len());
        let stamp = clock::realtime_ns().to_le_bytes();
        for (h, &(s, _)) in self.headers.iter_mut().zip(self.queue.iter().take(k)) {
            h[..SEQ_BYTES].copy_from_slice(&s.to_le_bytes());
            h[SEQ_BYTES..].copy_from_slice(&stamp);
        }
        let head = self.size.min(HEADER_BYTES);
        let payload = &io.wbuf[head..self.size.max(head)];
        let n = match self
            .mmsg
            .send(self.sock.as_raw_fd(), &self.headers[..k], head, payload)
        {
            Ok(n) => n,
            // The receiver's port is closed (an ICMP error came back): the batch is lost.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => k,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(0);
        }
        self.counters.calls += 1;
        for (_, counts) in self.queue.drain(..n) {
            self.counters.datagrams_sent += u64::from(counts);
        }
        self.bytes += (n * self.size) as u64;
        self.stats.set_sent(self.bytes);
        self.stats.set_udp(&self.counters);
        self.stats.touch(now);
        Ok(n)
    }
}

impl Flow for Sender {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(&mut self.sock, t, mio::Interest::WRITABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.counters.calls;
        loop {
            let now = clock::now_ns();
            if now >= io.end_ns {
                return Ok(Step::Done);
            }
            self.fill(now);
            if self.queue.is_empty() {
                self.stats.set_udp(&self.counters);
                return Ok(if self.pacer.finished() {
                    Step::Done
                } else {
                    Step::Wait
                });
            }
            if self.transmit(io, now)? == 0 {
                return Ok(Step::Wait);
            }
            if self.counters.calls - first >= CALLS_PER_TURN {
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        self.pacer.timer()
    }
}
