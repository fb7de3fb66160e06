//! The client's intervals: while a test runs, every `-i` the running byte count of each stream
//! is cut into an interval, with each TCP stream's TCP_INFO at the cut (what iperf3's own
//! client reports per interval). Cut by real timestamps, never by counts of writes.

use super::job::Shared;
use fathom_proto::sample::TcpInfo;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// One interval of one test, seconds from TEST_RUNNING.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Start, s.
    pub start: f64,
    /// End, s.
    pub end: f64,
    /// Per stream, the bytes moved in it (sent or received, as the stream's role on this end).
    pub bytes: Vec<u64>,
    /// Per stream, TCP_INFO at its end (None for UDP).
    pub tcp: Vec<Option<TcpInfo>>,
    /// Per stream, the path MTU the kernel holds (IP_MTU; None for UDP).
    pub pmtu: Vec<Option<u32>>,
    /// It lies in the omitted start (`-O`).
    pub omitted: bool,
}

/// Cuts intervals from the streams' running counts.
pub struct Sampler {
    every: Duration,
    started: Instant,
    omit_end: Instant,
    next: Instant,
    last_at: Instant,
    last: Vec<u64>,
    /// Clones of the TCP streams (they keep the sockets open for TCP_INFO).
    tcp: Vec<Option<TcpStream>>,
    /// The intervals cut so far.
    pub out: Vec<Interval>,
}

impl Sampler {
    /// A sampler cutting every `every` from `started`; `tcp` holds a clone of each TCP stream.
    pub fn new(
        every: Duration,
        started: Instant,
        omit_end: Instant,
        tcp: Vec<Option<TcpStream>>,
    ) -> Sampler {
        Sampler {
            every,
            started,
            omit_end,
            next: started + every,
            last_at: started,
            last: vec![0; tcp.len()],
            tcp,
            out: Vec::new(),
        }
    }

    /// When the next interval is due.
    pub fn next_at(&self) -> Instant {
        self.next
    }

    /// Cuts an interval if one is due at `now`; returns it.
    pub fn poll(&mut self, shared: &Shared, now: Instant) -> Option<&Interval> {
        if now < self.next {
            return None;
        }
        while self.next <= now {
            self.next += self.every;
        }
        self.cut(shared, now)
    }

    /// Cuts the last, partial interval at `now` when it is long enough to mean something
    /// (a tenth of `-i`, as a shorter one would only add noise).
    pub fn finish(&mut self, shared: &Shared, now: Instant) -> Option<&Interval> {
        if now.saturating_duration_since(self.last_at) < self.every / 10 {
            return None;
        }
        self.cut(shared, now)
    }

    fn cut(&mut self, shared: &Shared, now: Instant) -> Option<&Interval> {
        let counts: Vec<u64> = shared.counted.iter().map(|c| c.load(Relaxed)).collect();
        let bytes = counts
            .iter()
            .zip(&self.last)
            .map(|(c, l)| c.saturating_sub(*l))
            .collect();
        let tcp = self
            .tcp
            .iter()
            .map(|s| {
                s.as_ref()
                    .and_then(|s| fathom_engine::measure::tcp_info::read(s.as_raw_fd()))
            })
            .collect();
        let pmtu = self
            .tcp
            .iter()
            .map(|s| s.as_ref().and_then(path_mtu))
            .collect();
        let secs = |t: Instant| t.saturating_duration_since(self.started).as_secs_f64();
        self.out.push(Interval {
            start: secs(self.last_at),
            end: secs(now),
            bytes,
            tcp,
            pmtu,
            omitted: now <= self.omit_end,
        });
        self.last = counts;
        self.last_at = now;
        self.out.last()
    }
}

/// The connected socket's path MTU (IP_MTU or IPV6_MTU).
fn path_mtu(s: &TcpStream) -> Option<u32> {
    let ipv6 = s.peer_addr().ok()?.is_ipv6();
    fathom_engine::sockopt::path_mtu(s.as_raw_fd(), ipv6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_hold_the_bytes_moved_between_cuts() {
        let t0 = Instant::now();
        let shared = Shared::new(2, 0, t0);
        let mut s = Sampler::new(Duration::from_secs(1), t0, t0, vec![None, None]);
        assert!(s.poll(&shared, t0 + Duration::from_millis(500)).is_none());
        shared.count(0, 100);
        shared.count(1, 7);
        let iv = s.poll(&shared, t0 + Duration::from_secs(1)).unwrap();
        assert_eq!(
            (iv.bytes.clone(), iv.start, iv.end),
            (vec![100, 7], 0.0, 1.0)
        );
        shared.count(0, 50);
        assert!(s
            .finish(&shared, t0 + Duration::from_millis(1050))
            .is_none());
        let iv = s.finish(&shared, t0 + Duration::from_millis(1500)).unwrap();
        assert_eq!(iv.bytes, vec![50, 0]);
        assert!(iv.tcp.iter().all(Option::is_none) && !iv.omitted);
    }
}
