//! When a UDP receiver reads: woken by each arrival while datagrams come slowly, on a timer while
//! they come fast.
//!
//! A receiver that drains its socket and sleeps in epoll is woken by the next datagram, so at
//! hundreds of thousands of datagrams per second it is woken every few datagrams, and on
//! loopback the sender pays for each wake-up (an inter-processor interrupt in its system call).
//! Once a batch would collect within [`MAX_PERIOD_NS`], the receiver stops listening for
//! readiness and reads every batch / rate instead, so each wake-up finds about a batch waiting.
//! The socket's receive buffer holds what arrives meanwhile, so the period is also kept under
//! half the time that buffer takes to fill. Jitter and delay use the kernel's receive stamps, so
//! reading later does not change them.

/// Longest period between timed reads; slower streams are read as they arrive.
const MAX_PERIOD_NS: u64 = 2_000_000;
/// Shortest period between timed reads.
const MIN_PERIOD_NS: u64 = 20_000;

/// One receiver's read schedule.
#[derive(Debug)]
pub struct Coalesce {
    /// Datagrams one wake-up should find.
    batch: u64,
    /// Datagrams the receive buffer holds.
    room: u64,
    /// When the socket was last drained, and the datagrams read since.
    since: Option<u64>,
    got: u64,
    /// The next timed read (None: woken by readiness).
    next: Option<u64>,
}

impl Coalesce {
    /// The schedule of a receiver reading `batch` datagrams per call into a receive buffer of
    /// `rcvbuf` bytes, datagrams of `size` bytes.
    pub fn new(batch: u64, rcvbuf: u64, size: u64) -> Coalesce {
        // What one datagram takes of the buffer: the kernel charges its whole allocation.
        let truesize = size.next_power_of_two().max(512) + 512;
        Coalesce {
            batch: batch.max(1),
            room: rcvbuf / truesize,
            since: None,
            got: 0,
            next: None,
        }
    }

    /// `n` datagrams were read.
    pub fn read(&mut self, n: u64) {
        self.got += n;
    }

    /// The socket is empty at `now`: returns the next timed read, or None to wait for readiness.
    pub fn drained(&mut self, now: u64) -> Option<u64> {
        let since = self.since.replace(now);
        let got = std::mem::take(&mut self.got);
        self.next = since.filter(|&s| now > s && got > 0).and_then(|s| {
            let ns_per_datagram = (now - s) as f64 / got as f64;
            let fill = ns_per_datagram * self.batch as f64;
            let safe = ns_per_datagram * self.room as f64 / 2.0;
            (fill <= MAX_PERIOD_NS as f64 && safe >= MIN_PERIOD_NS as f64)
                .then(|| now + (fill.min(safe) as u64).max(MIN_PERIOD_NS))
        });
        self.next
    }

    /// The next timed read, if reading on a timer.
    pub fn next(&self) -> Option<u64> {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_streams_are_read_on_arrival_fast_ones_on_a_timer() {
        let mut c = Coalesce::new(64, 8 << 20, 64);
        assert_eq!(c.drained(1_000), None, "no rate yet");
        c.read(1);
        assert_eq!(c.drained(101_000), None, "10k/s: a batch takes 6.4 ms");
        c.read(4);
        let t = c.drained(113_000).expect("300k/s: timed");
        assert_eq!(t, 113_000 + 64 * 3_000, "a batch at 3 µs each");
        c.read(0);
        assert_eq!(c.drained(400_000), None, "nothing came: back to readiness");
    }

    #[test]
    fn the_period_stays_within_the_receive_buffer() {
        let mut c = Coalesce::new(1024, 64 << 10, 64);
        c.drained(0);
        c.read(100);
        // 1 µs per datagram; 64 KB holds 64 of them: half is 32 µs, under a batch's 1024 µs.
        assert_eq!(c.drained(100_000), Some(100_000 + 32_000));
    }
}
