//! The sending side of a UDP stream flow: numbered, timestamped datagrams in sendmmsg batches
//! (with GSO, of messages the kernel cuts into datagrams), paced when the plan sets a rate, with
//! the test-only faults injected here.
//!
//! A batch is written into one buffer of consecutive datagram slots, filled with the payload
//! once; before each call only the headers of the slots about to go are rewritten, so every
//! datagram (or GSO message) is one contiguous iovec.
//!
//! The socket is registered for writability only while its send buffer is full. Registered, it
//! has a waiter, and the kernel then wakes epoll (taking its lock, with interrupts off) each time
//! it frees one of the flow's datagrams: on loopback once per datagram, in the sender's own
//! system call — 5% of the sending thread's time at 64 bytes.

use super::mmsg::{enable_gso, Batch};
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
    /// UDP_SEGMENT is on; datagrams per message, and per call.
    gso: bool,
    per_message: usize,
    capacity: usize,
    /// `capacity` datagram slots of `size` bytes; the payload is copied in at the first run.
    slots: Vec<u8>,
    filled: bool,
    mmsg: Batch,
    queue: VecDeque<Queued>,
    faults: UdpFaults,
    held: Option<u64>,
    seq: u64,
    bytes: u64,
    counters: UdpCounters,
    /// Registered for writability (the send buffer was full).
    listening: bool,
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
    ) -> io::Result<Sender> {
        let batch = o.batch.max(1) as usize;
        let per_message = o.per_message() as usize;
        if o.gso {
            enable_gso(sock.as_raw_fd(), o.size as usize)?;
        }
        let capacity = batch * per_message;
        let pacer = Pacer::schedule(
            count.unwrap_or(u64::MAX),
            o.datagrams_per_second(),
            usize::MAX,
            index,
            flows,
        );
        Ok(Sender {
            sock,
            stats,
            pacer,
            size: o.size as usize,
            gso: o.gso,
            per_message,
            capacity,
            slots: vec![0; capacity * o.size as usize],
            filled: false,
            mmsg: Batch::new(batch),
            queue: VecDeque::with_capacity(capacity + 2),
            faults: o.faults.unwrap_or_default(),
            held: None,
            seq: 0,
            bytes: 0,
            counters: UdpCounters::default(),
            listening: false,
        })
    }

    /// Queues what the pacer allows now, up to a batch.
    fn fill(&mut self, now: u64) {
        while self.queue.len() < self.capacity {
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

    /// Writes the headers of the first `k` queued datagrams, sent at `now`, into their slots.
    fn stamp(&mut self, k: usize, now: u64) {
        let head = self.size.min(HEADER_BYTES);
        let stamp = now.to_le_bytes();
        let mut header = [0u8; HEADER_BYTES];
        header[SEQ_BYTES..].copy_from_slice(&stamp);
        for (slot, &(s, _)) in self
            .slots
            .chunks_mut(self.size)
            .zip(self.queue.iter().take(k))
        {
            header[..SEQ_BYTES].copy_from_slice(&s.to_le_bytes());
            slot[..head].copy_from_slice(&header[..head]);
        }
    }

    /// Sends one batch from the queue; how many datagrams went (0: the socket is full).
    fn transmit(&mut self, now: u64) -> io::Result<usize> {
        let k = self.queue.len().min(self.capacity);
        self.stamp(k, now);
        let sent = match self.mmsg.send(
            self.sock.as_raw_fd(),
            &self.slots[..k * self.size],
            self.per_message * self.size,
        ) {
            Ok(m) => m,
            // The receiver's port is closed (an ICMP error came back): the batch is lost.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => k.div_ceil(self.per_message),
            Err(e) if self.gso && e.raw_os_error() == Some(libc::EMSGSIZE) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "--gso: {}-byte datagrams do not fit one packet on this path ({e}); GSO \
                         cannot fragment: use a --size that fits the MTU, or run without --gso",
                        self.size
                    ),
                ))
            }
            Err(e) => return Err(e),
        };
        if sent == 0 {
            return Ok(0);
        }
        let n = (sent * self.per_message).min(k);
        self.counters.calls += 1;
        self.counters.messages += sent as u64;
        for (_, counts) in self.queue.drain(..n) {
            self.counters.datagrams_sent += u64::from(counts);
        }
        self.bytes += (n * self.size) as u64;
        self.stats.set_sent(self.bytes);
        self.stats.publish(&self.counters);
        self.stats.touch(now);
        Ok(n)
    }
}

impl Flow for Sender {
    fn register(&mut self, _: &mio::Registry, _: mio::Token) -> io::Result<()> {
        // Registered only while the send buffer is full (the module's note).
        Ok(())
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        if self.listening {
            io.registry.deregister(&mut self.sock)?;
            self.listening = false;
        }
        if !self.filled && !io.wbuf.is_empty() {
            self.filled = true;
            for chunk in self.slots.chunks_mut(io.wbuf.len()) {
                chunk.copy_from_slice(&io.wbuf[..chunk.len()]);
            }
        }
        let first = self.counters.calls;
        loop {
            let now = clock::now_ns();
            if now >= io.end_ns {
                return Ok(Step::Done);
            }
            self.fill(now);
            if self.queue.is_empty() {
                self.stats.publish(&self.counters);
                return Ok(if self.pacer.finished() {
                    Step::Done
                } else {
                    Step::Wait
                });
            }
            if self.transmit(now)? == 0 {
                // Registering reports a buffer that drained meanwhile, so no wake-up is lost.
                io.registry
                    .register(&mut self.sock, io.token, mio::Interest::WRITABLE)?;
                self.listening = true;
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
