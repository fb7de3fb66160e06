//! fathom's end of a running iperf3 test, once a second in the agent's log: the bytes each way
//! in the interval and every TCP stream's TCP_INFO (rtt, cwnd, retransmits so far). Each
//! interval is also kept ([`Tick`]) for the agent's store.

use super::job::Shared;
use super::results::stream_id;
use fathom_proto::sample::TcpInfo;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often a line is logged.
pub const EVERY: Duration = Duration::from_secs(1);

/// The most intervals kept for the store (a day of seconds; the agent's longest test is shorter).
const MAX_TICKS: usize = 86_400;

/// One interval of fathom's end: per stream, the bytes it moved and its TCP_INFO at the end.
#[derive(Debug, Clone)]
pub struct Tick {
    /// Start, seconds since TEST_RUNNING.
    pub start_s: f64,
    /// End, seconds since TEST_RUNNING.
    pub end_s: f64,
    /// Per stream in connection order: bytes in the interval, TCP_INFO (TCP only).
    pub streams: Vec<(u64, Option<TcpInfo>)>,
}

/// What the last interval ended at.
pub struct Ticker {
    test: usize,
    /// Per stream: whether this end sends, and its TCP socket (none for UDP).
    streams: Vec<(bool, Option<RawFd>)>,
    last: Vec<u64>,
    start: Instant,
    last_at: Instant,
    /// The intervals so far, oldest first.
    pub ticks: Vec<Tick>,
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
            ticks: Vec::new(),
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
        let mut kept = Vec::with_capacity(self.streams.len());
        for (i, (sends, fd)) in self.streams.iter().enumerate() {
            let total = shared.counted[i].load(Ordering::Relaxed);
            let d = total - self.last[i];
            self.last[i] = total;
            if *sends {
                sent += d
            } else {
                received += d
            }
            let info = fd.and_then(fathom_engine::measure::tcp_info::read);
            kept.push((d, info));
            if let Some(t) = info {
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
        if self.ticks.len() < MAX_TICKS {
            self.ticks.push(Tick {
                start_s: self.last_at.duration_since(self.start).as_secs_f64(),
                end_s: now.duration_since(self.start).as_secs_f64(),
                streams: kept,
            });
        }
        self.last_at = now;
    }
}
