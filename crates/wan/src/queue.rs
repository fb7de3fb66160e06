//! Where frames wait inside the emulator: a [`Pool`] of frame buffers allocated once, and a
//! [`TimeQueue`] of the frames held, ordered by departure time. Nothing allocates per frame.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Fixed-size frame buffers allocated once, handed out by index (a slot).
pub struct Pool {
    memory: Vec<u8>,
    slot_size: usize,
    /// Free slots; a stack, so the most recently freed (cache-warm) buffer is reused first.
    free: Vec<u32>,
}

impl Pool {
    /// `slots` buffers of `slot_size` bytes each. The memory is zeroed lazily by the kernel, so an
    /// idle pool costs address space, not RAM.
    pub fn new(slots: usize, slot_size: usize) -> Self {
        Pool {
            memory: vec![0; slots * slot_size],
            slot_size,
            free: (0..slots as u32).rev().collect(),
        }
    }

    /// Whether a buffer is free.
    pub fn has_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Takes a free buffer, if any.
    pub fn take(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// Returns a buffer taken with [`Pool::take`].
    pub fn give(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Start of the buffer of `slot`, for handing to the kernel.
    pub fn slot_ptr(&mut self, slot: u32) -> *mut u8 {
        self.memory[slot as usize * self.slot_size..].as_mut_ptr()
    }
}

/// A held frame: its buffer and length, and when it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Held {
    /// Departure time in nanoseconds (compared first).
    pub depart: u64,
    /// Arrival order, which breaks ties so equal departure times keep arrival order.
    pub seq: u64,
    /// Pool slot holding the frame.
    pub slot: u32,
    /// Frame length in bytes.
    pub len: u32,
}

/// Held frames ordered by departure time (then arrival order). Capacity is fixed at creation.
pub struct TimeQueue {
    heap: BinaryHeap<Reverse<Held>>,
    capacity: usize,
    next_seq: u64,
}

impl TimeQueue {
    /// A queue that never holds more than `capacity` frames, so it never reallocates.
    pub fn new(capacity: usize) -> Self {
        TimeQueue {
            heap: BinaryHeap::with_capacity(capacity),
            capacity,
            next_seq: 0,
        }
    }

    /// Number of frames held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Holds a frame until `depart`. The caller keeps `len() < capacity`.
    pub fn push(&mut self, depart: u64, slot: u32, len: u32) {
        debug_assert!(self.heap.len() < self.capacity, "time queue over capacity");
        self.heap.push(Reverse(Held {
            depart,
            seq: self.next_seq,
            slot,
            len,
        }));
        self.next_seq += 1;
    }

    /// Departure time of the next frame to leave.
    pub fn next_departure(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(held)| held.depart)
    }

    /// Removes and returns the next frame if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Held> {
        match self.heap.peek() {
            Some(Reverse(held)) if held.depart <= now => self.heap.pop().map(|Reverse(held)| held),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_hands_out_each_slot_once() {
        let mut pool = Pool::new(3, 64);
        let slots: Vec<u32> = (0..3).map(|_| pool.take().unwrap()).collect();
        assert_eq!(pool.take(), None);
        assert_eq!(slots, [0, 1, 2]);
        assert!(!pool.has_free());
        pool.give(1);
        assert!(pool.has_free());
        assert_eq!(pool.take(), Some(1));
        assert_eq!(pool.take(), None);
        assert_eq!(pool.slot_ptr(2) as usize - pool.slot_ptr(0) as usize, 128);
    }

    #[test]
    fn leaves_in_time_order_ties_in_arrival_order() {
        let mut queue = TimeQueue::new(8);
        queue.push(30, 0, 1);
        queue.push(10, 1, 1);
        queue.push(10, 2, 1);
        queue.push(20, 3, 1);
        assert_eq!(queue.next_departure(), Some(10));
        assert_eq!(queue.pop_due(5), None);
        let order: Vec<u32> = std::iter::from_fn(|| queue.pop_due(100))
            .map(|h| h.slot)
            .collect();
        assert_eq!(order, [1, 2, 3, 0]);
        assert_eq!(queue.len(), 0);
    }
}
