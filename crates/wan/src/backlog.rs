//! The bottleneck buffer's occupancy: frames that have arrived but not yet passed the rate limiter.
//! The queue limit is checked against it, and its peak is reported.

use std::collections::VecDeque;

use crate::params::QueueLimit;

/// Frames waiting for the rate limiter, in arrival order (which is also their leaving order).
pub struct Backlog {
    /// (time the frame passes the rate limiter, length) per waiting frame.
    waiting: VecDeque<(u64, u32)>,
    bytes: u64,
}

impl Backlog {
    /// A backlog that can track `capacity` frames without reallocating.
    pub fn new(capacity: usize) -> Self {
        Backlog {
            waiting: VecDeque::with_capacity(capacity),
            bytes: 0,
        }
    }

    /// Frames waiting at `now` (after [`Backlog::advance`]).
    pub fn packets(&self) -> u64 {
        self.waiting.len() as u64
    }

    /// Bytes waiting at `now` (after [`Backlog::advance`]).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Forgets the frames that have passed the rate limiter by `now`.
    pub fn advance(&mut self, now: u64) {
        while let Some(&(leaves, len)) = self.waiting.front() {
            if leaves > now {
                break;
            }
            self.bytes -= len as u64;
            self.waiting.pop_front();
        }
    }

    /// Whether a frame of `len` bytes fits under `limit`.
    pub fn fits(&self, limit: QueueLimit, len: u32) -> bool {
        match limit {
            QueueLimit::Packets(max) => self.packets() < max,
            QueueLimit::Bytes(max) => self.bytes + len as u64 <= max,
        }
    }

    /// Records a frame that waits until `leaves`; frames leaving at once are not recorded.
    pub fn add(&mut self, now: u64, leaves: u64, len: u32) {
        if leaves > now {
            self.waiting.push_back((leaves, len));
            self.bytes += len as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_until_frames_leave() {
        let mut backlog = Backlog::new(4);
        backlog.add(0, 10, 100);
        backlog.add(0, 20, 200);
        backlog.add(0, 0, 999);
        assert_eq!((backlog.packets(), backlog.bytes()), (2, 300));
        assert!(!backlog.fits(QueueLimit::Packets(2), 1));
        assert!(backlog.fits(QueueLimit::Bytes(400), 100));
        assert!(!backlog.fits(QueueLimit::Bytes(400), 101));
        backlog.advance(10);
        assert_eq!((backlog.packets(), backlog.bytes()), (1, 200));
        backlog.advance(25);
        assert_eq!((backlog.packets(), backlog.bytes()), (0, 0));
    }
}
