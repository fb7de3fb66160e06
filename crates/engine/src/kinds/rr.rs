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
            to_send: 0,
            got: 0,
            drained: false,
            now: 0,
            watched: false,
        };
        if s.side.leads(f.dir) {
            let (i, n) = s.place(f);
            let role = Asker::new(&rr, Pacer::new(s.plan, &rr, i, n));
            Box::new(RrFlow { io, role })
        } else {
            let role = Answerer {
                // A 0-byte request (refused by plan validation) must not divide by zero.
                req: (rr.request as u64).max(1),
                resp: rr.response as u64,
                tx: 0,
            };
            Box::new(RrFlow { io, role })
        }
    })
}

/// A connection and its byte counts: what both sides of a transaction keep.
struct Conn {
    sock: Wire,
    stats: Arc<FlowStats>,
    quickack: bool,
    sent: u64,
    received: u64,
    /// Bytes owed to the peer, not yet written.
    to_send: u64,
    /// Bytes read toward the next complete message.
    got: u64,
    /// A short read left the socket empty in this run: the next data brings a new readiness
    /// event, so the read that would only say EAGAIN is skipped (one system call less per
    /// transaction). Cleared at the start of every run.
    drained: bool,
    /// The clock as last read (monotonic ns): at the start of the run, then as each read
    /// returned. A transaction reads the clock once, when its answer came; what else wants the
    /// time (the next request's start in a closed loop, the wait's deadline) takes this one.
    now: u64,
    /// The socket is in the worker's epoll set. A flow that waits in its reads takes it out
    /// (one `epoll_ctl`, once): while it is in, every segment that arrives also runs epoll's
    /// wake-up callback under the socket's wait-queue lock, which a plain blocking socket (as
    /// sockperf's) never pays. It goes back in before the flow waits on the event loop.
    watched: bool,
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

    /// Reads once: `Some(n)` bytes (0 = end of stream), `None` when nothing is there (after
    /// waiting in the kernel, until the deadline `until` when that is not 0). Bytes read set
    /// `now` to when they came.
    fn read(&mut self, rbuf: &mut [u8], until: u64) -> io::Result<Option<u64>> {
        loop {
            let r = if until == 0 {
                self.sock.read(rbuf)
            } else {
                self.sock.read_waiting(rbuf, until.saturating_sub(self.now))
            };
            match r {
                Ok(n) => {
                    self.now = clock::now_ns();
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

    /// Writes what is owed (`to_send` goes down by what went), then reads once unless the
    /// last read left the socket empty (`drained`, which becomes whether this one did):
    /// `Some(n)` bytes, added to `got` (0 = end of stream), `None` when there is nothing to
    /// read now. When the worker lets this flow wait in its reads (`io.wait_until`, capped at
    /// `until`, the role's own next deadline), nothing is owed and the connection can wait
    /// that long, an empty socket is waited on in the read itself instead of the event loop.
    fn exchange(&mut self, io: &mut Io<'_>, until: u64) -> io::Result<Option<u64>> {
        self.flush_owed(io.wbuf)?;
        let until = io.wait_until.min(until);
        let wait =
            if self.to_send == 0 && until > 0 && self.sock.can_wait(until.saturating_sub(self.now))
            {
                until
            } else {
                0
            };
        if self.drained && wait == 0 {
            return Ok(None);
        }
        if wait > 0 && self.watched {
            io.registry.deregister(self.sock.socket())?;
            self.watched = false;
        }
        let read = self.read(io.rbuf, wait)?;
        if let Some(n) = read {
            self.drained = self.sock.drained(n as usize, io.rbuf.len());
            self.got += n;
        }
        Ok(read)
    }

    /// Writes what is owed, as much as the socket takes, or flushes what TLS holds.
    fn flush_owed(&mut self, wbuf: &[u8]) -> io::Result<()> {
        if self.to_send > 0 {
            self.to_send -= self.write(wbuf, self.to_send)?;
        } else {
            self.sock.flush()?;
        }
        Ok(())
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
            match self.read(rbuf, 0)? {
                None => return Ok(Step::Wait),
                Some(0) => return Ok(Step::Done),
                Some(_) => {}
            }
        }
    }

    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, READ_WRITE)?;
        self.watched = true;
        Ok(())
    }

    /// Puts the socket back in the worker's epoll set before the flow waits on it: `step`
    /// passed on. Edge-triggered, the socket is reported at once if it is ready already, so
    /// nothing that arrived while it was out is missed.
    fn watch_for(&mut self, step: Step, io: &Io<'_>) -> io::Result<Step> {
        if step == Step::Wait && !self.watched {
            self.register(io.registry, io.token)?;
        }
        Ok(step)
    }
}

/// One side of an rr connection: the connection, and the role that uses it.
struct RrFlow<R> {
    io: Conn,
    role: R,
}

/// What tells the asking side from the answering one; [`RrFlow`] runs either in turns of at
/// most [`TX_PER_TURN`] transactions.
trait Role: Send {
    /// One exchange on `conn` and what it completed; `Some(step)` ends the turn with `step`.
    fn exchange(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<Option<Step>>;
    /// Transactions completed so far.
    fn transactions(&self) -> u64;
    /// The turn is over with work left: what to do before yielding to the worker's other flows.
    fn end_turn(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<()>;
    /// The time limit passed.
    fn stop(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<Step>;
    /// When the role next wants to run regardless of readiness (monotonic ns).
    fn timer(&self) -> Option<u64>;
}

impl<R: Role> Flow for RrFlow<R> {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        self.io.register(r, t)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.role.transactions();
        self.io.drained = false;
        self.io.now = clock::now_ns();
        loop {
            if let Some(step) = self.role.exchange(&mut self.io, io)? {
                return self.io.watch_for(step, io);
            }
            if self.role.transactions() - first >= TX_PER_TURN {
                self.role.end_turn(&mut self.io, io)?;
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let step = self.role.stop(&mut self.io, io)?;
        self.io.watch_for(step, io)
    }

    fn timer(&self) -> Option<u64> {
        self.role.timer()
    }
}

/// The asking side.
struct Asker {
    pacer: Pacer,
    starts: VecDeque<u64>,
    req: u64,
    resp: u64,
    tx: u64,
    /// Past the end: the requests are over, the answers left in flight are read and dropped.
    draining: bool,
}

impl Asker {
    fn new(rr: &RrOptions, pacer: Pacer) -> Self {
        let starts = VecDeque::with_capacity(pacer.capacity().min(1 << 16));
        Asker {
            pacer,
            starts,
            req: rr.request as u64,
            // A 0-byte response (refused by plan validation) must not complete forever.
            resp: (rr.response as u64).max(1),
            tx: 0,
            draining: false,
        }
    }

    /// Stops asking (the answering side sees end of stream and closes its side in turn) and
    /// drains what is still coming.
    fn wind_down(&mut self, conn: &mut Conn, rbuf: &mut [u8]) -> io::Result<Step> {
        self.draining = true;
        conn.close()?;
        conn.drain(rbuf)
    }
}

impl Role for Asker {
    fn exchange(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<Option<Step>> {
        // A closed loop's next request starts when the last answer came (nothing but this
        // code runs between); an open loop's schedule wants the clock as it is now.
        let now = if self.pacer.paced() {
            clock::now_ns()
        } else {
            conn.now
        };
        if self.draining || now >= io.end_ns {
            return self.wind_down(conn, io.rbuf).map(Some);
        }
        if self.pacer.finished() {
            // Every request answered: nothing is in flight, so nothing to drain.
            return Ok(Some(if conn.close()? {
                Step::Done
            } else {
                Step::Wait
            }));
        }
        while let Some(start) = self.pacer.issue(now) {
            self.starts.push_back(start);
            conn.to_send += self.req;
        }
        // Only a closed loop waits in its read: an open loop's next request is due on a
        // schedule that a receive timeout's coarse ticks would overshoot (p99 rose from
        // 2-12 ms to 70-130 ms at --rate 50 on loopback when it waited too).
        let until = if self.pacer.paced() { 0 } else { u64::MAX };
        match conn.exchange(io, until)? {
            None => return Ok(Some(Step::Wait)),
            Some(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection mid-test",
                ))
            }
            Some(_) => {}
        }
        let done = conn.now;
        while conn.got >= self.resp {
            conn.got -= self.resp;
            let start = self.starts.pop_front().unwrap_or(done);
            io.latency.record(done.saturating_sub(start));
            self.pacer.completed();
            self.tx += 1;
        }
        conn.stats.set_transactions(self.tx);
        conn.stats.touch(done);
        Ok(None)
    }

    fn transactions(&self) -> u64 {
        self.tx
    }

    fn end_turn(&mut self, _: &mut Conn, _: &mut Io<'_>) -> io::Result<()> {
        Ok(())
    }

    fn stop(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<Step> {
        self.wind_down(conn, io.rbuf)
    }

    fn timer(&self) -> Option<u64> {
        self.pacer.timer().filter(|_| !self.draining)
    }
}

/// The answering side: one response per complete request.
struct Answerer {
    req: u64,
    resp: u64,
    tx: u64,
}

impl Role for Answerer {
    fn exchange(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<Option<Step>> {
        match conn.exchange(io, u64::MAX)? {
            None => return Ok(Some(Step::Wait)),
            // The asking side is done: close this side too, so that it reads end of stream.
            Some(0) => {
                return Ok(Some(if conn.close()? {
                    Step::Done
                } else {
                    Step::Wait
                }))
            }
            Some(_) => {}
        }
        let complete = conn.got / self.req;
        conn.got %= self.req;
        conn.to_send += complete * self.resp;
        self.tx += complete;
        conn.stats.set_transactions(self.tx);
        conn.stats.touch(conn.now);
        Ok(None)
    }

    fn transactions(&self) -> u64 {
        self.tx
    }

    fn end_turn(&mut self, conn: &mut Conn, io: &mut Io<'_>) -> io::Result<()> {
        if conn.to_send > 0 {
            conn.flush_owed(io.wbuf)?;
        }
        Ok(())
    }

    fn stop(&mut self, _: &mut Conn, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Wait)
    }

    fn timer(&self) -> Option<u64> {
        None
    }
}
