//! UDP request/response over a connected socket pair per flow. Each request carries a sequence
//! number in its first bytes (as many as fit, up to 8), which the answer echoes; a request not
//! answered within the timeout of its start (the instant its latency counts from) is counted
//! lost and never as a fast one, and a late answer is ignored: no latency exceeds the timeout.

use super::pacer::Pacer;
use crate::clock;
use crate::kind::{Flow, Io, Setup, Sockets, Step, READ_WRITE};
use crate::measure::counters::FlowStats;
use crate::measure::latency::Latency;
use fathom_proto::plan::RrOptions;
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

/// Datagrams per run before yielding to the worker's other flows.
const PER_TURN: u64 = 64;

/// Builds this side's flows of the udp_rr kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
    let rr = s.rr_options()?;
    s.udp_flows(sockets, |f, sock, stats| {
        Ok(if s.side.leads(f.dir) {
            let (i, n) = s.place(f);
            Box::new(Asker::new(sock, stats, &rr, Pacer::new(s.plan, &rr, i, n))) as Box<dyn Flow>
        } else {
            Box::new(Answerer {
                sock,
                stats,
                echo: echo_len(&rr),
                resp: vec![0u8; rr.response as usize],
                drop_every: rr.test_drop_every.map(u64::from),
                seen: 0,
                tx: 0,
            })
        })
    })
}

/// How many leading bytes carry the sequence number (and are echoed).
fn echo_len(rr: &RrOptions) -> usize {
    (rr.request.min(rr.response) as usize).min(8)
}

/// The low `k` bytes of a sequence number, as it travels.
fn tag(seq: u64, k: usize) -> u64 {
    if k >= 8 {
        seq
    } else {
        seq & ((1u64 << (8 * k)) - 1)
    }
}

fn read_tag(b: &[u8], k: usize) -> u64 {
    let mut x = [0u8; 8];
    x[..k].copy_from_slice(&b[..k]);
    u64::from_le_bytes(x)
}

/// A request awaiting its answer.
struct Pending {
    tag: u64,
    start: u64,
    deadline: u64,
}

struct Asker {
    sock: mio::net::UdpSocket,
    stats: Arc<FlowStats>,
    pacer: Pacer,
    pending: VecDeque<Pending>,
    req: Vec<u8>,
    echo: usize,
    timeout: u64,
    seq: u64,
    tx: u64,
    lost: u64,
    sent: u64,
    received: u64,
}

impl Asker {
    fn new(sock: mio::net::UdpSocket, stats: Arc<FlowStats>, rr: &RrOptions, pacer: Pacer) -> Self {
        let pending = VecDeque::with_capacity(pacer.capacity().min(1 << 16));
        Asker {
            sock,
            stats,
            pacer,
            pending,
            req: vec![0u8; rr.request as usize],
            echo: echo_len(rr),
            timeout: rr.udp_timeout_ns,
            seq: 0,
            tx: 0,
            lost: 0,
            sent: 0,
            received: 0,
        }
    }

    fn expire(&mut self, now: u64) {
        while self.pending.front().is_some_and(|p| p.deadline <= now) {
            self.pending.pop_front();
            self.pacer.completed();
            self.lost += 1;
            self.stats.set_lost(self.lost);
        }
    }

    /// The answer tagged `t`, read at `done`: a transaction when it came within the timeout,
    /// else its request is lost (the thread may have been kept from reading it in time).
    fn answer(&mut self, t: u64, done: u64, latency: &Latency) {
        let Some(pos) = self.pending.iter().position(|p| p.tag == t) else {
            return;
        };
        let p = self.pending.remove(pos).expect("position is in range");
        self.pacer.completed();
        if done > p.deadline {
            self.lost += 1;
            self.stats.set_lost(self.lost);
            return;
        }
        latency.record(done.saturating_sub(p.start));
        self.tx += 1;
        self.stats.set_transactions(self.tx);
        self.stats.touch(done);
    }

    /// Sends what the pacer allows; `false` if the socket is full.
    fn send(&mut self, now: u64) -> io::Result<bool> {
        while let Some(start) = self.pacer.issue(now) {
            self.seq += 1;
            let t = tag(self.seq, self.echo);
            self.req[..self.echo].copy_from_slice(&t.to_le_bytes()[..self.echo]);
            match self.sock.send(&self.req) {
                Ok(n) => {
                    self.sent += n as u64;
                    self.pending.push_back(Pending {
                        tag: t,
                        start,
                        deadline: start + self.timeout,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.pacer.unissue();
                    self.seq -= 1;
                    return Ok(false);
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    self.pending.push_back(Pending {
                        tag: t,
                        start,
                        deadline: start + self.timeout,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        self.stats.set_sent(self.sent);
        Ok(true)
    }
}

impl Flow for Asker {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(&mut self.sock, t, READ_WRITE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.tx + self.lost;
        loop {
            let now = clock::now_ns();
            self.expire(now);
            if now >= io.end_ns || self.pacer.finished() {
                return Ok(Step::Done);
            }
            self.send(now)?;
            let n = match self.sock.recv(io.rbuf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            };
            self.received += n as u64;
            self.stats.set_received(self.received);
            if n < self.echo {
                continue;
            }
            let t = read_tag(io.rbuf, self.echo);
            self.answer(t, clock::now_ns(), io.latency);
            if self.tx + self.lost - first >= PER_TURN {
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        let expiry = self.pending.front().map(|p| p.deadline);
        match (expiry, self.pacer.timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

struct Answerer {
    sock: mio::net::UdpSocket,
    stats: Arc<FlowStats>,
    echo: usize,
    resp: Vec<u8>,
    drop_every: Option<u64>,
    seen: u64,
    tx: u64,
}

impl Flow for Answerer {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(&mut self.sock, t, mio::Interest::READABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        for _ in 0..PER_TURN {
            let n = match self.sock.recv(io.rbuf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            };
            self.seen += 1;
            self.stats.add_received(n as u64);
            if self
                .drop_every
                .is_some_and(|d| d > 0 && self.seen.is_multiple_of(d))
            {
                continue;
            }
            let k = self.echo.min(n);
            self.resp[..k].copy_from_slice(&io.rbuf[..k]);
            match self.sock.send(&self.resp) {
                Ok(m) => {
                    self.stats.add_sent(m as u64);
                    self.tx += 1;
                    self.stats.set_transactions(self.tx);
                    self.stats.touch(clock::now_ns());
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Step::Again)
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_read_after_its_timeout_is_lost_and_never_a_latency() {
        let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let sock = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        sock.connect(peer.local_addr().unwrap()).unwrap();
        let rr = RrOptions {
            request: 8,
            response: 8,
            burst: 2,
            rate: None,
            udp_timeout_ns: 2_000_000,
            test_drop_every: None,
        };
        let stats = Arc::new(FlowStats::default());
        let pacer = Pacer::schedule(2, None, 2, 0, 1);
        let mut a = Asker::new(sock, stats, &rr, pacer);
        assert!(a.send(1_000_000).unwrap());
        let latency = Latency::default();
        // Both sent at 1 ms with a 2 ms timeout: one answered at 2.5 ms, one read at 4.8 ms
        // (the thread kept from reading in time).
        a.answer(1, 2_500_000, &latency);
        a.answer(2, 4_800_000, &latency);
        assert_eq!((a.tx, a.lost), (1, 1));
        let mut h = crate::measure::latency::histogram();
        latency.drain_into(&mut h);
        assert_eq!(h.len(), 1);
        assert!(h.max() <= 2_000_000, "{} ns", h.max());
        assert!(a.pacer.finished());
    }
}
