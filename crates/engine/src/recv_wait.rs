//! A receive that blocks in the kernel instead of in the worker's event loop, for a worker whose
//! only flow is a request/response one (the way sockperf and netperf wait for an answer): one
//! `recvfrom` per answer instead of `epoll_wait` then `recvfrom`, a system call less per
//! transaction.
//!
//! The socket leaves non-blocking mode the first time a read may block; from then on every
//! other call on it says `MSG_DONTWAIT` itself (see [`crate::tls::Wire`]), and only a waiting
//! read blocks, bounded by the socket's receive timeout (`SO_RCVTIMEO`) so that the worker
//! still sees its deadlines: the end of the test, the flow's timer, an abort. The timeout is
//! set rarely: kept while it ends before the deadline, halved as the deadline nears, and not
//! used at all in the last [`MIN_BLOCK_NS`] + [`SLACK_NS`] (the event loop's own wait, precise
//! to a millisecond, takes over there).

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

/// Longest a read blocks, so that an abort is noticed as quickly as the event loop notices it.
pub const MAX_BLOCK_NS: u64 = 100_000_000;

/// Shortest receive timeout worth setting: the kernel counts it in scheduler ticks (1–4 ms).
pub const MIN_BLOCK_NS: u64 = 10_000_000;

/// How late the kernel may wake a timed-out receive (a tick, and the timer wheel's rounding).
pub const SLACK_NS: u64 = 10_000_000;

/// What to do before a read that may wait until a deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Too close to the deadline: read without blocking.
    NoWait,
    /// Block with the receive timeout already set.
    Wait,
    /// Set the receive timeout to this many ns, then block.
    SetThenWait(u64),
}

/// A socket's receive timeout, as this side last set it.
#[derive(Debug, Default)]
pub struct RecvWait {
    /// The timeout set, ns; 0 while the socket is still non-blocking.
    timeout_ns: u64,
}

impl RecvWait {
    /// True once the socket blocks (its other calls must say `MSG_DONTWAIT`).
    pub fn blocking(&self) -> bool {
        self.timeout_ns > 0
    }

    /// What to do before a read when the deadline is `remaining_ns` away: a timeout already set
    /// is kept while a read blocked for all of it still returns before the deadline (with
    /// [`SLACK_NS`] to spare) and it is not much shorter than the time left; otherwise a new one
    /// of half the time left (at most [`MAX_BLOCK_NS`]), so that only a few are set as the
    /// deadline nears.
    pub fn plan(&self, remaining_ns: u64) -> Plan {
        let budget = remaining_ns.saturating_sub(SLACK_NS);
        if budget < MIN_BLOCK_NS {
            return Plan::NoWait;
        }
        let cur = self.timeout_ns;
        if cur > 0 && cur <= budget && cur >= budget.min(MAX_BLOCK_NS) / 4 {
            return Plan::Wait;
        }
        let next = if budget >= 2 * MAX_BLOCK_NS {
            MAX_BLOCK_NS
        } else {
            (budget / 2).max(MIN_BLOCK_NS)
        };
        Plan::SetThenWait(next)
    }

    /// Prepares `sock` for a read that may wait `remaining_ns`: `Ok(true)` when it may block.
    pub fn prepare(&mut self, sock: &impl AsFd, remaining_ns: u64) -> io::Result<bool> {
        match self.plan(remaining_ns) {
            Plan::NoWait => Ok(false),
            Plan::Wait => Ok(true),
            Plan::SetThenWait(ns) => {
                let s = socket2::SockRef::from(sock);
                s.set_read_timeout(Some(Duration::from_nanos(ns)))?;
                if !self.blocking() {
                    s.set_nonblocking(false)?;
                }
                self.timeout_ns = ns;
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ns: u64) -> RecvWait {
        RecvWait { timeout_ns: ns }
    }

    #[test]
    fn a_far_deadline_sets_the_longest_timeout_once() {
        assert_eq!(set(0).plan(10_000_000_000), Plan::SetThenWait(MAX_BLOCK_NS));
        assert_eq!(set(MAX_BLOCK_NS).plan(10_000_000_000), Plan::Wait);
        assert_eq!(set(MAX_BLOCK_NS).plan(u64::MAX), Plan::Wait);
    }

    #[test]
    fn a_near_deadline_is_never_overshot_and_halves_the_timeout() {
        // 60 ms left: a 100 ms timeout would wake past the deadline.
        let p = set(MAX_BLOCK_NS).plan(60_000_000);
        assert_eq!(p, Plan::SetThenWait(25_000_000));
        // Kept while it still fits, reset when it no longer does.
        assert_eq!(set(25_000_000).plan(40_000_000), Plan::Wait);
        assert_eq!(
            set(25_000_000).plan(30_000_000),
            Plan::SetThenWait(MIN_BLOCK_NS)
        );
    }

    #[test]
    fn every_planned_wait_ends_before_the_deadline() {
        let mut w = set(0);
        let mut remaining = 3 * MAX_BLOCK_NS;
        while remaining > 0 {
            match w.plan(remaining) {
                Plan::NoWait => assert!(remaining < MIN_BLOCK_NS + SLACK_NS),
                Plan::Wait => assert!(w.timeout_ns + SLACK_NS <= remaining),
                Plan::SetThenWait(ns) => {
                    assert!(ns + SLACK_NS <= remaining, "{ns} with {remaining} left");
                    w.timeout_ns = ns;
                }
            }
            remaining -= remaining.min(1_000_000);
        }
    }

    #[test]
    fn the_last_stretch_reads_without_blocking() {
        assert_eq!(set(0).plan(MIN_BLOCK_NS + SLACK_NS - 1), Plan::NoWait);
        assert_eq!(set(MAX_BLOCK_NS).plan(0), Plan::NoWait);
    }

    #[test]
    fn a_short_timeout_grows_back_when_the_deadline_moves_away() {
        // After the end the deadline becomes the drain's, a second away.
        assert_eq!(
            set(MIN_BLOCK_NS).plan(1_000_000_000),
            Plan::SetThenWait(MAX_BLOCK_NS)
        );
    }
}
