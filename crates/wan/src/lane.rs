//! One direction of the forwarder: its receive ring, send socket, [`Link`], held frames and
//! counters. Each turn [`Lane::receive`] reads the frames waiting in the ring and asks the link
//! when each leaves: a frame due at once stays in its ring slot and is sent from there; a frame to
//! hold is copied into the [`Pool`] and queued by departure time; a dropped frame is only counted.
//! [`Lane::transmit`] then writes every due frame in `sendmmsg` batches and hands the slots back.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use crate::clock::RealtimeMap;
use crate::counters::{DirCounters, SharedCounters};
use crate::link::{Link, Verdict};
use crate::params::LinkParams;
use crate::queue::{Pool, TimeQueue};
use crate::ring::{RingFrame, RxRing};
use crate::socket::{Batch, PacketSocket};

/// Frames per `sendmmsg` call.
const BATCH: usize = 64;
/// Most frames read from the ring in one turn.
pub const READ_BUDGET: usize = 256;

/// What a lane shares with the [`crate::Forwarder`] handle.
pub struct LaneShared {
    /// Parameters to apply, set by the handle.
    params: Mutex<LinkParams>,
    /// Set when `params` changed and the lane has not applied them yet.
    changed: AtomicBool,
    /// The lane's published counters.
    pub counters: SharedCounters,
}

impl LaneShared {
    /// Shared state starting with `params`.
    pub fn new(params: LinkParams) -> Self {
        LaneShared {
            params: Mutex::new(params),
            changed: AtomicBool::new(false),
            counters: SharedCounters::default(),
        }
    }

    /// The parameters last set.
    pub fn params(&self) -> LinkParams {
        self.params
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sets new parameters for the lane to apply.
    pub fn set_params(&self, params: LinkParams) {
        *self.params.lock().unwrap_or_else(|e| e.into_inner()) = params;
        self.changed.store(true, Relaxed);
    }
}

/// Where a frame to send lives.
#[derive(Clone, Copy)]
enum Source {
    Pool(u32),
    Ring(usize),
}

/// One direction's state.
pub struct Lane {
    rx: RxRing,
    tx: PacketSocket,
    max_frame: usize,
    shared: Arc<LaneShared>,
    link: Link,
    pool: Pool,
    queue: TimeQueue,
    /// Frames read this turn that are due at once, still in their ring slots.
    immediate: Vec<RingFrame>,
    tx_batch: Batch,
    tx_sources: [(Source, u32); BATCH],
    counters: DirCounters,
}

impl Lane {
    /// A lane reading `rx` and writing `tx`, holding at most `capacity` frames of up to
    /// `max_frame` bytes.
    pub fn new(
        rx: RxRing,
        tx: PacketSocket,
        max_frame: usize,
        capacity: usize,
        shared: Arc<LaneShared>,
    ) -> Self {
        let params = shared.params();
        Lane {
            rx,
            tx,
            max_frame,
            link: Link::new(params, capacity),
            pool: Pool::new(capacity, max_frame.next_multiple_of(64)),
            queue: TimeQueue::new(capacity),
            immediate: Vec::with_capacity(READ_BUDGET),
            tx_batch: Batch::new(BATCH),
            tx_sources: [(Source::Pool(0), 0); BATCH],
            counters: DirCounters::default(),
            shared,
        }
    }

    /// Applies parameters the handle has set since the last call.
    pub fn apply_params(&mut self) {
        if self.shared.changed.load(Relaxed) && self.shared.changed.swap(false, Relaxed) {
            self.link.set_params(self.shared.params());
        }
    }

    /// Waits until a frame arrives or `timeout_ns` has passed; returns whether a frame arrived.
    pub fn wait_readable(&self, timeout_ns: u64) -> io::Result<bool> {
        self.rx.socket().wait_readable(timeout_ns)
    }

    /// When the next held frame is due, if any.
    pub fn next_departure(&self) -> Option<u64> {
        self.queue.next_departure()
    }

    /// Reads the frames waiting in the ring (up to [`READ_BUDGET`]); returns how many.
    /// Each frame counts as arriving when the kernel stamped it, so the time this thread took to
    /// wake up is not added to its delay.
    pub fn receive(&mut self) -> usize {
        let mut clocks = RealtimeMap::now();
        let mut read = 0;
        while read < READ_BUDGET {
            let Some(frame) = self.rx.next() else { break };
            read += 1;
            let arrival = clocks.to_monotonic(frame.realtime_ns).unwrap_or_else(|| {
                clocks = RealtimeMap::now();
                clocks
                    .to_monotonic(frame.realtime_ns)
                    .unwrap_or(clocks.monotonic())
            });
            match self.decide(arrival, &frame) {
                Some(depart) if depart <= clocks.monotonic() => {
                    self.immediate.push(frame);
                    continue;
                }
                Some(depart) => self.hold(depart, &frame),
                None => {}
            }
            self.rx.release(frame.index);
        }
        read
    }

    /// Counts the frame that arrived at `arrival` and returns its departure time, or `None` if it
    /// is dropped.
    fn decide(&mut self, arrival: u64, frame: &RingFrame) -> Option<u64> {
        let c = &mut self.counters;
        c.received += 1;
        if frame.len > self.max_frame || frame.captured < frame.len {
            c.dropped_oversize += 1;
            return None;
        }
        if !self.pool.has_free() {
            c.dropped_overflow += 1;
            return None;
        }
        match self.link.admit(arrival, frame.len as u32) {
            Verdict::Depart(depart) => {
                let (packets, bytes) = self.link.backlog();
                c.queue_peak_packets = c.queue_peak_packets.max(packets);
                c.queue_peak_bytes = c.queue_peak_bytes.max(bytes);
                Some(depart)
            }
            Verdict::Lost => {
                c.dropped_loss += 1;
                None
            }
            Verdict::QueueFull => {
                c.dropped_queue += 1;
                None
            }
        }
    }

    /// Copies a frame out of the ring into a pool buffer and queues it until `depart`.
    fn hold(&mut self, depart: u64, frame: &RingFrame) {
        self.counters.delayed += 1;
        let held = self.queue.len() as u64 + 1;
        self.counters.held_peak_packets = self.counters.held_peak_packets.max(held);
        let slot = self.pool.take().expect("decide checked for a free buffer");
        // SAFETY: the ring slot holds `len` bytes at its data pointer until released (decide checked
        // captured == len), and the pool buffer holds at least `max_frame` >= len bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(self.rx.data(frame), self.pool.slot_ptr(slot), frame.len)
        };
        self.queue.push(depart, slot, frame.len as u32);
    }

    /// Writes the held frames due at `now`, then the ring frames due at once, a batch at a time.
    pub fn transmit(&mut self, now: u64) {
        let mut next_immediate = 0;
        loop {
            let mut count = 0;
            while count < BATCH {
                let (source, data, len) = if let Some(held) = self.queue.pop_due(now) {
                    (
                        Source::Pool(held.slot),
                        self.pool.slot_ptr(held.slot).cast_const(),
                        held.len,
                    )
                } else if let Some(frame) = self.immediate.get(next_immediate) {
                    next_immediate += 1;
                    (
                        Source::Ring(frame.index),
                        self.rx.data(frame),
                        frame.len as u32,
                    )
                } else {
                    break;
                };
                self.tx_sources[count] = (source, len);
                self.tx_batch.set(count, data, len as usize);
                count += 1;
            }
            if count == 0 {
                break;
            }
            self.send(count);
            for &(source, _) in &self.tx_sources[..count] {
                match source {
                    Source::Pool(slot) => self.pool.give(slot),
                    Source::Ring(index) => self.rx.release(index),
                }
            }
        }
        self.immediate.clear();
    }

    /// Sends the first `count` entries of the batch, skipping (and counting) any the interface
    /// refuses.
    fn send(&mut self, count: usize) {
        let mut start = 0;
        while start < count {
            match self.tx.send(&mut self.tx_batch, start, count) {
                Ok(sent) => {
                    let bytes: u64 = self.tx_sources[start..start + sent]
                        .iter()
                        .map(|&(_, len)| len as u64)
                        .sum();
                    self.counters.forwarded += sent as u64;
                    self.counters.forwarded_bytes += bytes;
                    start += sent;
                }
                Err(_) => {
                    self.counters.dropped_tx_error += 1;
                    start += 1;
                }
            }
        }
    }

    /// Publishes the counters for the handle.
    pub fn publish(&mut self) -> io::Result<()> {
        self.counters.dropped_ring += self.rx.socket().take_drops()?;
        self.shared.counters.publish(&self.counters);
        Ok(())
    }
}
