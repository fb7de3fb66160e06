//! What a stream thread runs with: the flags, counts and byte budget every stream of a test
//! shares with its control thread, its job, what it counted, and the pacing of its sends.
//! TCP (`stream`) and UDP (`udp`) streams alike.

use fathom_proto::sample::TcpInfo;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a blocked read or write waits before it looks at the test's flags again.
pub const POLL: Duration = Duration::from_millis(50);
/// The longest a receiver drains after TEST_END.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What every stream of one test shares with the control thread.
pub struct Shared {
    /// Senders stop (TEST_END, or the test is abandoned).
    pub stop_send: AtomicBool,
    /// Receivers stop at once (the test is abandoned).
    pub abort: AtomicBool,
    /// Receivers drain up to their target, then stop.
    pub drain: AtomicBool,
    /// Per stream, the bytes the client says it sent (u64::MAX until known).
    pub targets: Vec<AtomicU64>,
    /// Per stream, the bytes sent or received so far (omitted start included), for the log.
    pub counted: Vec<AtomicU64>,
    /// Bytes left to send across all streams (`-n`), u64::MAX for no limit.
    pub budget: AtomicU64,
    /// When the omitted start (`-O`) ends.
    pub omit_end: Instant,
}

impl Shared {
    /// A test's shared state for `n` streams.
    pub fn new(n: usize, budget: u64, omit_end: Instant) -> Shared {
        Shared {
            stop_send: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            drain: AtomicBool::new(false),
            targets: (0..n).map(|_| AtomicU64::new(u64::MAX)).collect(),
            counted: (0..n).map(|_| AtomicU64::new(0)).collect(),
            budget: AtomicU64::new(if budget == 0 { u64::MAX } else { budget }),
            omit_end,
        }
    }

    /// Whether receiver `index`, holding `counted` bytes, should stop: the test was abandoned,
    /// or it is draining (since `drain_since`, set here) and holds what the client sent or has
    /// drained long enough.
    pub fn done(&self, index: usize, counted: u64, drain_since: &mut Option<Instant>) -> bool {
        if self.abort.load(Ordering::Relaxed) {
            return true;
        }
        if !self.drain.load(Ordering::Relaxed) {
            return false;
        }
        let since = *drain_since.get_or_insert_with(Instant::now);
        counted >= self.targets[index].load(Ordering::Relaxed) || since.elapsed() > DRAIN_LIMIT
    }

    /// Adds `n` bytes to stream `index`'s running count.
    pub fn count(&self, index: usize, n: u64) {
        self.counted[index].fetch_add(n, Ordering::Relaxed);
    }

    /// Takes up to `want` bytes from the budget; 0 once it is spent.
    pub fn reserve(&self, want: u64) -> u64 {
        let mut left = self.budget.load(Ordering::Relaxed);
        loop {
            if left == u64::MAX {
                return want;
            }
            let take = want.min(left);
            match self.budget.compare_exchange_weak(
                left,
                left - take,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return take,
                Err(now) => left = now,
            }
        }
    }
}

/// What one stream counted, after the omitted start.
#[derive(Debug, Default, Clone)]
pub struct StreamEnd {
    /// Bytes sent or received.
    pub bytes: u64,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: u64,
    /// UDP: datagrams lost (gaps in the sequence numbers).
    pub lost: u64,
    /// UDP: datagrams that arrived out of order.
    pub out_of_order: u64,
    /// UDP: jitter, seconds (RFC 1889).
    pub jitter_s: f64,
    /// TCP: retransmitted segments.
    pub retransmits: u64,
    /// TCP: TCP_INFO at the end.
    pub tcp: Option<TcpInfo>,
    /// This thread's CPU time (user, system), µs.
    pub cpu_us: (u64, u64),
}

/// What a stream thread needs to run.
pub struct Job {
    /// Index in connection order.
    pub index: usize,
    /// This end sends.
    pub sends: bool,
    /// Bytes per write or datagram.
    pub len: usize,
    /// Bits per second (0: no limit).
    pub rate: u64,
    /// 64-bit UDP sequence numbers.
    pub udp64: bool,
    /// The test's flags.
    pub shared: Arc<Shared>,
}

/// Sleeps until `bytes` sent fit `rate` bits/s since `start`, in slices that watch `stop`.
pub fn pace(rate: u64, start: Instant, bytes: u64, stop: &AtomicBool) {
    if rate == 0 {
        return;
    }
    let due = start + Duration::from_secs_f64(bytes as f64 * 8.0 / rate as f64);
    while !stop.load(Ordering::Relaxed) {
        let left = due.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(POLL));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_exactly() {
        let sh = Shared::new(1, 10, Instant::now());
        assert_eq!(sh.reserve(4), 4);
        assert_eq!(sh.reserve(4), 4);
        assert_eq!(sh.reserve(4), 2);
        assert_eq!(sh.reserve(4), 0);
        assert_eq!(Shared::new(1, 0, Instant::now()).reserve(7), 7);
    }
}
