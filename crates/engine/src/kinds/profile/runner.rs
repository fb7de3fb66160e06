//! One flow's program run on its connection, the same on both ends: the [`Cursor`] says what
//! comes next, the runner writes and reads the bytes, waits out think times and rates, and
//! counts. Opening and closing connections differ between the ends, so the runner hands them
//! to its flow as [`Event::Connect`] and [`Event::Disconnect`].

use super::cursor::{Action, Cursor, Next};
use crate::clock;
use crate::kind::Io;
use crate::measure::counters::FlowStats;
use crate::measure::latency::Latency;
use fathom_proto::sample::{ProfileCounters, PROFILE_OPS};
use mio::net::TcpStream;
use std::io::{self, Read, Write};
use std::sync::Arc;

/// Flow operations per run before yielding to the worker's other flows.
const OPS_PER_TURN: u32 = 64;

/// What the flow must do after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Event {
    /// Open the connection, then call [`Runner::connected`].
    Connect,
    /// Close it (reading to the other end's close), then call [`Runner::disconnected`].
    Disconnect,
    /// Blocked: run again on readiness, or at this instant.
    Wait(Option<u64>),
    /// More to do now, after the worker's other flows had a turn.
    Yield,
    /// The program is over and the connection closed.
    End,
    /// The other end closed the connection.
    PeerEnded,
    /// Transaction this many ended at a barrier: call [`Runner::pass_barrier`] once every
    /// flow got there.
    Barrier(usize),
}

/// The operation under way.
#[derive(Clone, Copy, Debug)]
enum Doing {
    Connect,
    Disconnect,
    /// Bytes left to write.
    Write(u64),
    /// Bytes left to read.
    Read(u64),
    /// Thinking until this instant.
    Think(u64),
}

/// A flow's program, its progress and its counters.
pub(super) struct Runner {
    cursor: Cursor,
    doing: Option<Doing>,
    stats: Arc<FlowStats>,
    /// Records each iteration's time as a latency (the end running the program as written).
    timed: bool,
    sent: u64,
    received: u64,
    /// Counts per flow operation, published at the end of every step.
    ops: ProfileCounters,
    /// The operation under way's entry in `ops`, and when it began.
    current: Option<(usize, u64)>,
}

impl Runner {
    /// A runner of `cursor` counting into `stats`; `timed` records iteration latencies.
    pub(super) fn new(cursor: Cursor, stats: Arc<FlowStats>, timed: bool) -> Runner {
        Runner {
            cursor,
            doing: None,
            stats,
            timed,
            sent: 0,
            received: 0,
            ops: ProfileCounters::default(),
            current: None,
        }
    }

    /// Runs the program on `sock` (none while the connection is closed) until it blocks, its
    /// turn is over or the connection must be opened or closed.
    pub(super) fn step(
        &mut self,
        sock: Option<&mut TcpStream>,
        io: &mut Io<'_>,
    ) -> io::Result<Event> {
        let event = self.turn(sock, io);
        self.stats.set_profile(&self.ops);
        event
    }

    fn turn(&mut self, mut sock: Option<&mut TcpStream>, io: &mut Io<'_>) -> io::Result<Event> {
        let mut ops = 0;
        loop {
            let now = clock::now_ns();
            let doing = match self.doing {
                Some(d) => d,
                None => {
                    if ops >= OPS_PER_TURN {
                        return Ok(Event::Yield);
                    }
                    ops += 1;
                    if self.cursor.must_probe() {
                        if let Some(e) = self.probe(sock.as_deref_mut(), io.rbuf)? {
                            return Ok(e);
                        }
                    }
                    let d = match self.cursor.next(now) {
                        Next::Do(a) => doing_of(a, now),
                        Next::Until(t) => return Ok(Event::Wait(Some(t))),
                        Next::Barrier(tx) => return Ok(Event::Barrier(tx)),
                        Next::End => return Ok(Event::End),
                    };
                    self.doing = Some(d);
                    self.current = self
                        .cursor
                        .position()
                        .filter(|&i| i < PROFILE_OPS)
                        .map(|i| (i, now));
                    d
                }
            };
            let left = match doing {
                Doing::Connect => return Ok(Event::Connect),
                Doing::Disconnect => return Ok(Event::Disconnect),
                Doing::Think(until) if now < until => return Ok(Event::Wait(Some(until))),
                Doing::Think(_) => 0,
                Doing::Write(n) => self.write(open(sock.as_deref_mut())?, io.wbuf, n)?,
                Doing::Read(n) => match self.read(open(sock.as_deref_mut())?, io.rbuf, n)? {
                    Some(left) => left,
                    None => {
                        self.doing = None;
                        return Ok(Event::PeerEnded);
                    }
                },
            };
            if left > 0 {
                self.doing = Some(match doing {
                    Doing::Write(_) => Doing::Write(left),
                    _ => Doing::Read(left),
                });
                return Ok(Event::Wait(None));
            }
            self.doing = None;
            self.op_done(now);
            let ended = self.cursor.done();
            self.count(ended, io.latency);
        }
    }

    /// The connection [`Event::Connect`] asked for is open, as `fd`.
    pub(super) fn connected(&mut self, fd: i32) {
        self.doing = None;
        self.stats.set_fd(fd);
        self.op_done(clock::now_ns());
        self.cursor.connected();
        self.stats.set_profile(&self.ops);
    }

    /// The connection [`Event::Disconnect`] asked to close is closed.
    pub(super) fn disconnected(&mut self, latency: &Latency) {
        self.doing = None;
        self.stats.set_fd(-1);
        self.op_done(clock::now_ns());
        let ended = self.cursor.disconnected();
        self.count(ended, latency);
        self.stats.set_profile(&self.ops);
    }

    /// Every flow reached the barrier [`Event::Barrier`] named.
    pub(super) fn pass_barrier(&mut self) {
        self.cursor.pass_barrier();
    }

    /// The other end closed the connection: true when that ended a timed transaction (the
    /// accepting end's way to learn of it), false when the program did not expect it.
    pub(super) fn peer_ended(&mut self) -> bool {
        self.doing = None;
        self.stats.set_fd(-1);
        self.cursor.peer_ended()
    }

    /// Reads and counts until the other end's close (`Ok(true)`) or an empty socket.
    pub(super) fn drain(&mut self, sock: &mut TcpStream, rbuf: &mut [u8]) -> io::Result<bool> {
        loop {
            match sock.read(rbuf) {
                Ok(0) => return Ok(true),
                Ok(n) => self.add_received(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// One look at a connection the other end may have closed to end a timed transaction.
    fn probe(
        &mut self,
        sock: Option<&mut TcpStream>,
        rbuf: &mut [u8],
    ) -> io::Result<Option<Event>> {
        let Some(sock) = sock else {
            return Ok(None);
        };
        match self.drain(sock, rbuf) {
            Ok(true) => Ok(Some(Event::PeerEnded)),
            Ok(false) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes up to `want` bytes; what is left to write.
    fn write(&mut self, sock: &mut TcpStream, wbuf: &[u8], want: u64) -> io::Result<u64> {
        let mut left = want;
        while left > 0 {
            let n = left.min(wbuf.len() as u64) as usize;
            match sock.write(&wbuf[..n]) {
                Ok(k) => {
                    left -= k as u64;
                    self.sent += k as u64;
                    self.add_bytes(k as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.stats.set_sent(self.sent);
        Ok(left)
    }

    /// Reads up to `want` bytes, never more; what is left to read, or `None` at the other
    /// end's close.
    fn read(
        &mut self,
        sock: &mut TcpStream,
        rbuf: &mut [u8],
        want: u64,
    ) -> io::Result<Option<u64>> {
        let mut left = want;
        while left > 0 {
            let n = left.min(rbuf.len() as u64) as usize;
            match sock.read(&mut rbuf[..n]) {
                Ok(0) => return Ok(None),
                Ok(k) => {
                    left -= k as u64;
                    self.add_received(k);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Some(left))
    }

    fn add_received(&mut self, n: usize) {
        self.received += n as u64;
        self.stats.set_received(self.received);
        self.add_bytes(n as u64);
    }

    /// Counts bytes the operation under way moved.
    fn add_bytes(&mut self, n: u64) {
        if let Some((i, _)) = self.current {
            self.ops.ops[i].bytes += n;
        }
    }

    /// Counts the operation under way as done at `now`.
    fn op_done(&mut self, now: u64) {
        if let Some((i, started)) = self.current.take() {
            let o = &mut self.ops.ops[i];
            o.count += 1;
            o.ns += now.saturating_sub(started);
        }
    }

    /// Counts an iteration that ended (it began at `started`), into `latency` too.
    fn count(&mut self, ended: Option<u64>, latency: &Latency) {
        let Some(started) = ended else {
            return;
        };
        let now = clock::now_ns();
        if self.timed {
            latency.record(now.saturating_sub(started));
        }
        self.stats.set_transactions(self.cursor.iterations());
        self.stats.touch(now);
    }
}

/// The action as an operation under way, started at `now`.
fn doing_of(a: Action, now: u64) -> Doing {
    match a {
        Action::Connect => Doing::Connect,
        Action::Disconnect => Doing::Disconnect,
        Action::Write(n) => Doing::Write(n),
        Action::Read(n) => Doing::Read(n),
        Action::Think(ns) => Doing::Think(now.saturating_add(ns)),
    }
}

/// The open connection a data operation needs.
fn open(sock: Option<&mut TcpStream>) -> io::Result<&mut TcpStream> {
    sock.ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "no connection open"))
}
