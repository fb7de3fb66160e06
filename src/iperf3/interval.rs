//! fathom's end of a running iperf3 test, once a second in the agent's log: the bytes each way
//! in the interval and every TCP stream's TCP_INFO (rtt, cwnd, retransmits so far).

use super::results::stream_id;
use super::stream::Shared;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often a line is logged.
pub const EVERY: Duration = Duration::from_secs(1);

/// What the last interval ended at.
pub struct Ticker {
    test: usize,
    /// Per stream: whether this end sends, and its TCP socket (none for UDP).
    streams: Vec<(bool, Option<RawFd>)>,
    last: Vec<u64>,
    start: Instant,
    last_at: Instant,
}

impl Ticker {
    /// A ticker for test `test`'s streams, from `start`. The descriptors must stay open until
    /// the ticker's last [`Ticker::tick`] (the session joins the streams after it).
    pub fn new(test: usize, streams: Vec<(bool, Option<RawFd>)>, start: Instant) -> Ticker {
        Ticker {
            test,
            last: vec![0; streams.len()],
            streams,
            start,
            last_at: start,
        }
    }

    /// When the next line is due.
    pub fn next_at(&self) -> Instant {
        self.last_at + EVERY
    }

    /// Logs the interval that ends now.
    pub fn tick(&mut self, shared: &Shared) {
        let now = Instant::now();
        let secs = now.duration_since(self.last_at).as_secs_f64();
        let (mut sent, mut received) = (0u64, 0u64);
        let mut tcp = Vec::new();
        for (i, (sends, fd)) in self.streams.iter().enumerate() {
            let total = shared.counted[i].load(Ordering::Relaxed);
            let d = total - self.last[i];
            self.last[i] = total;
            if *sends {
                sent += d
            } else {
                received += d
            }
            if let Some(t) = fd.and_then(fathom_engine::measure::tcp_info::read) {
                tcp.push(format!(
                    "{}: rtt {} us cwnd {} retr {}",
                    stream_id(i),
                    t.rtt_us,
                    t.snd_cwnd,
                    t.retransmits
                ));
            }
        }
        let mbps = |b: u64| b as f64 * 8.0 / secs.max(1e-9) / 1e6;
        eprintln!(
            "fathom serve: iperf3 test {} {:.1}-{:.1} s: sent {:.1} Mbit/s, received {:.1} Mbit/s{}{}",
            self.test,
            self.last_at.duration_since(self.start).as_secs_f64(),
            now.duration_since(self.start).as_secs_f64(),
            mbps(sent),
            mbps(received),
            if tcp.is_empty() { "" } else { "; " },
            tcp.join(", ")
        );
        self.last_at = now;
    }
}
