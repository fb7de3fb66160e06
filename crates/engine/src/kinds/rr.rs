//! TCP request/response on long-lived connections: the asking side sends a request of N bytes and
//! waits for a response of M bytes, with `burst` requests in flight (closed loop) or on a schedule
//! (open loop); the answering side replies to every complete request.

use super::pacer::Pacer;
use crate::kind::{Flow, Io, Setup, Sockets, Step, READ_WRITE};
use crate::measure::counters::FlowStats;
use crate::tls::Wire;
use crate::{clock, sockopt};
use fathom_proto::plan::RrOptions;
use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Transactions per run before yielding to the worker's other flows.
const TX_PER_TURN: u64 = 64;

/// Builds this side's flows of the rr kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
    let rr = s.rr_options()?;
    s.tcp_flows(sockets, |f, sock, stats| {
        let io = Conn {
            sock,
            stats,
            quickack: s.plan.socket.quickack,
            sent: 0,
            received: 0,
        };
        if s.side.leads(f.dir) {
            let (i, n) = s.place(f);
            Box::new(Asker::new(io, &rr, Pacer::new(s.plan, &rr, i, n)))
        } else {
            Box::new(Answerer {
                io,
                // A 0-byte request (refused by plan validation) must not divide by zero.
                req: (rr.request as u64).max(1),
                resp: rr.response as u64,
                got: 0,
                to_send: 0,
                tx: 0,
            })
        }
    })
}

/// A connection and its byte counts.
struct Conn {
    sock: Wire,
    stats: Arc<FlowStats>,
    quickack: bool,
    sent: u64,
    received: u64,
}

impl Conn {
    /// Writes up to `want` bytes; returns how many went (0 when the socket is full).
    fn write(&mut self, wbuf: &[u8], want: u64) -> io::Result<u64> {
        let mut done = 0;
        while done < want {
            let n = (want - done).min(wbuf.len() as u64) as usize;
            match self.sock.write(&wbuf[..n]) {
                Ok(k) => done += k as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.sent += done;
        self.stats.set_sent(self.sent);
        Ok(done)
    }

    /// Reads once: `Some(n)` bytes (0 = end of stream), `None` when nothing is there.
    fn read(&mut self, rbuf: &mut [u8]) -> io::Result<Option<u64>> {
        loop {
            match self.sock.read(rbuf) {
                Ok(n) => {
                    if self.quickack {
                        sockopt::set_quickack(self.sock.as_raw_fd());
                    }
                    self.received += n as u64;
                    self.stats.set_received(self.received);
                    return Ok(Some(n as u64));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes what is pending (`to_send` goes down by what went), then reads once unless the
    /// last read left the socket empty (`drained`): `Some(n)` bytes (0 = end of stream), `None`
    /// when there is nothing to read now.
    fn flush_and_read(
        &mut self,
        io: &mut Io<'_>,
        to_send: &mut u64,
        drained: bool,
    ) -> io::Result<Option<u64>> {
        if *to_send > 0 {
            *to_send -= self.write(io.wbuf, *to_send)?;
        } else {
            self.sock.flush()?;
        }
        if drained {
            return Ok(None);
        }
        self.read(io.rbuf)
    }

    /// Ends this side's writing (the peer reads end of stream); `Ok(false)` while TLS records
    /// still wait for room in the socket (call again).
    fn close(&mut self) -> io::Result<bool> {
        self.sock.close()
    }

    /// Reads and discards until the peer's end of stream (`Done`) or an empty socket (`Wait`),
    /// so that the socket never closes with unread data: that would send the peer a reset, and
    /// an answering side still writing its last response would fail on it.
    fn drain(&mut self, rbuf: &mut [u8]) -> io::Result<Step> {
        loop {
            match self.read(rbuf)? {
                None => return Ok(Step::Wait),
                Some(0) => return Ok(Step::Done),
                Some(_) => {}
            }
        }
    }

    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, READ_WRITE)
    }
}

/// The asking side.
struct Asker {
    io: Conn,
    pacer: Pacer,
    starts: VecDeque<u64>,
    req: u64,
    resp: u64,
    to_send: u64,
    got: u64,
    tx: u64,
    /// Past the end: the requests are over, the answers left in flight are read and dropped.
    draining: bool,
}

impl Asker {
    fn new(io: Conn, rr: &RrOptions, pacer: Pacer) -> Self {
        let starts = VecDeque::with_capacity(pacer.capacity().min(1 << 16));
        Asker {
            io,
            pacer,
            starts,
            req: rr.request as u64,
            // A 0-byte response (refused by plan validation) must not complete forever.
            resp: (rr.response as u64).max(1),
            to_send: 0,
            got: 0,
            tx: 0,
            draining: false,
        }
    }

    /// Stops asking (the answering side sees end of stream and closes its side in turn) and
    /// drains what is still coming.
    fn wind_down(&mut self, rbuf: &mut [u8]) -> io::Result<Step> {
        self.draining = true;
        self.io.close()?;
        self.io.drain(rbuf)
    }
}

impl Flow for Asker {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        self.io.register(r, t)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.tx;
        // A short read left the socket empty: the next data brings a new readiness event, so the
        // read that would only say EAGAIN is skipped (one system call less per transaction).
        let mut drained = false;
        loop {
            let now = clock::now_ns();
            if self.draining || now >= io.end_ns {
                return self.wind_down(io.rbuf);
            }
            if self.pacer.finished() {
                // Every request answered: nothing is in flight, so nothing to drain.
                return Ok(if self.io.close()? {
                    Step::Done
                } else {
                    Step::Wait
                });
            }
            while let Some(start) = self.pacer.issue(now) {
                self.starts.push_back(start);
                self.to_send += self.req;
            }
            let Some(n) = self.io.flush_and_read(io, &mut self.to_send, drained)? else {
                return Ok(Step::Wait);
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection mid-test",
                ));
            }
            drained = self.io.sock.drained(n as usize, io.rbuf.len());
            self.got += n;
            let done = clock::now_ns();
            while self.got >= self.resp {
                self.got -= self.resp;
                let start = self.starts.pop_front().unwrap_or(done);
                io.latency.record(done.saturating_sub(start));
                self.pacer.completed();
                self.tx += 1;
            }
            self.io.stats.set_transactions(self.tx);
            self.io.stats.touch(done);
            if self.tx - first >= TX_PER_TURN {
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.wind_down(io.rbuf)
    }

    fn timer(&self) -> Option<u64> {
        self.pacer.timer().filter(|_| !self.draining)
    }
}

/// The answering side: one response per complete request.
struct Answerer {
    io: Conn,
    req: u64,
    resp: u64,
    got: u64,
    to_send: u64,
    tx: u64,
}

impl Flow for Answerer {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        self.io.register(r, t)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.tx;
        let mut drained = false;
        loop {
            let Some(n) = self.io.flush_and_read(io, &mut self.to_send, drained)? else {
                return Ok(Step::Wait);
            };
            if n == 0 {
                // The asking side is done: close this side too, so that it reads end of stream.
                return Ok(if self.io.close()? {
                    Step::Done
                } else {
                    Step::Wait
                });
            }
            drained = self.io.sock.drained(n as usize, io.rbuf.len());
            self.got += n;
            let complete = self.got / self.req;
            self.got %= self.req;
            self.to_send += complete * self.resp;
            self.tx += complete;
            self.io.stats.set_transactions(self.tx);
            self.io.stats.touch(clock::now_ns());
            if self.tx - first >= TX_PER_TURN {
                if self.to_send > 0 {
                    self.to_send -= self.io.write(io.wbuf, self.to_send)?;
                }
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Wait)
    }
}
