//! The rate limiter: a token bucket that tells each frame, as it arrives, when it may leave.
//!
//! Tokens are bytes. They accrue at the rate up to the bucket's depth (`burst`); a frame leaves
//! once the bucket holds its length, and takes it. With a depth of zero a frame leaves when its
//! last bit would have been sent on a link of that rate, as netem's `rate` does. Frames leave in
//! the order they arrive. Times are nanoseconds on any clock the caller chooses, so tests drive it
//! with a fake one.

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// A token bucket; `None` rate means frames leave as they arrive.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: Option<u64>,
    burst: u64,
    /// Tokens at `stamp`, in bytes scaled by `NANOS_PER_SEC * 8` to keep the arithmetic exact.
    tokens: i128,
    /// Time of the last departure (or of the start).
    stamp: u64,
}

impl TokenBucket {
    /// A full bucket of `burst` bytes filling at `rate_bps` bits per second.
    pub fn new(rate_bps: Option<u64>, burst: u64) -> Self {
        TokenBucket {
            rate_bps,
            burst,
            tokens: Self::scale(burst),
            stamp: 0,
        }
    }

    /// Changes the rate and depth, keeping the tokens already in the bucket (up to the new depth).
    pub fn set(&mut self, rate_bps: Option<u64>, burst: u64) {
        self.rate_bps = rate_bps;
        self.burst = burst;
        self.tokens = self.tokens.min(Self::scale(burst));
    }

    /// The time a frame of `len` bytes arriving at `now` leaves; never before `now`, never before
    /// the frame before it.
    pub fn schedule(&mut self, now: u64, len: u64) -> u64 {
        let Some(rate) = self.rate_bps else {
            return now;
        };
        let start = now.max(self.stamp);
        let gained = (start - self.stamp) as i128 * rate as i128;
        let tokens = (self.tokens + gained).min(Self::scale(self.burst)) - Self::scale(len);
        if tokens >= 0 {
            self.tokens = tokens;
            self.stamp = start;
            return start;
        }
        // Wait until the deficit has refilled, rounding up so a frame never leaves early.
        let wait = ((-tokens) + rate as i128 - 1) / rate as i128;
        let depart = start + wait as u64;
        self.tokens = tokens + wait * rate as i128;
        self.stamp = depart;
        depart
    }

    fn scale(bytes: u64) -> i128 {
        bytes as i128 * 8 * NANOS_PER_SEC as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn unlimited_leaves_at_once() {
        let mut bucket = TokenBucket::new(None, 0);
        assert_eq!(bucket.schedule(5, 1500), 5);
        assert_eq!(bucket.schedule(5, 1500), 5);
    }

    #[test]
    fn depth_zero_is_a_serial_link() {
        // 1500 bytes at 12 Mbit/s take exactly 1 ms.
        let mut bucket = TokenBucket::new(Some(12_000_000), 0);
        assert_eq!(bucket.schedule(0, 1500), MS);
        assert_eq!(bucket.schedule(0, 1500), 2 * MS);
        assert_eq!(bucket.schedule(0, 1500), 3 * MS);
        // After an idle gap the link starts fresh.
        assert_eq!(bucket.schedule(10 * MS, 1500), 11 * MS);
    }

    #[test]
    fn burst_passes_then_paces() {
        let mut bucket = TokenBucket::new(Some(12_000_000), 3000);
        assert_eq!(bucket.schedule(0, 1500), 0);
        assert_eq!(bucket.schedule(0, 1500), 0);
        assert_eq!(bucket.schedule(0, 1500), MS);
        // Idle refills the bucket, but only up to its depth.
        assert_eq!(bucket.schedule(100 * MS, 1500), 100 * MS);
        assert_eq!(bucket.schedule(100 * MS, 1500), 100 * MS);
        assert_eq!(bucket.schedule(100 * MS, 1500), 101 * MS);
    }

    #[test]
    fn long_run_rate_is_exact() {
        // 100 Mbit/s, 1514-byte frames offered faster than the rate for 10 simulated seconds.
        let mut bucket = TokenBucket::new(Some(100_000_000), 0);
        let (mut now, mut last, mut bytes) = (0u64, 0u64, 0u64);
        while now < 10_000 * MS {
            last = bucket.schedule(now, 1514);
            bytes += 1514;
            now += 100_000; // one frame every 100 µs offered: 121 Mbit/s
        }
        let rate = bytes as f64 * 8.0 / (last as f64 / 1e9);
        assert!((rate - 100e6).abs() < 100e6 * 1e-6, "{rate}");
    }

    #[test]
    fn never_early_with_awkward_rates() {
        let mut bucket = TokenBucket::new(Some(7_777_777), 0);
        let mut previous = 0;
        for i in 0..1000u64 {
            let depart = bucket.schedule(i * 1000, 64 + i % 1400);
            assert!(depart >= previous && depart >= i * 1000);
            previous = depart;
        }
        let ideal: u64 =
            (0..1000u64).map(|i| 64 + i % 1400).sum::<u64>() * 8 * 1_000_000_000 / 7_777_777;
        assert!(
            previous >= ideal && previous <= ideal + 1000,
            "{previous} vs {ideal}"
        );
    }

    #[test]
    fn rate_change_keeps_order() {
        let mut bucket = TokenBucket::new(Some(12_000_000), 0);
        assert_eq!(bucket.schedule(0, 1500), MS);
        bucket.set(Some(24_000_000), 0);
        assert_eq!(bucket.schedule(0, 1500), MS + MS / 2);
    }
}
