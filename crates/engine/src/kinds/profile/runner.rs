//! One flow's program run on its connection, the same on both ends: the [`Cursor`] says what
//! comes next, the runner writes and reads the bytes, waits out think times and rates, and
//! counts. Opening and closing connections differ between the ends, so the runner hands them
//! to its flow as [`Event::Connect`] and [`Event::Disconnect`]. In a UDP group a data
//! operation moves one datagram ([`super::carrier`]).

mod catchup;

use super::carrier::{self, datagram, stream, Carrier, Datagram, RECV_TIMEOUT_NS};
use super::cursor::{Action, Cursor, Next};
use crate::clock;
use crate::endpoint::fd_buffers;
use crate::kind::Io;
use crate::measure::counters::FlowStats;
use crate::measure::latency::Latency;
use crate::tls::Wire;
use fathom_proto::profile::{ProfileCounters, PROFILE_OPS};
use std::io;
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
    /// An operation marked `can_fail` failed and was counted: drop the connection (the
    /// program goes on, opening a new one when it needs one).
    Broken,
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
    /// One datagram of this many bytes to send.
    Send(u64),
    /// One datagram to receive, lost if it has not come by this instant.
    Recv(u64),
}

/// A flow's program, its progress and its counters.
pub(super) struct Runner {
    cursor: Cursor,
    doing: Option<Doing>,
    stats: Arc<FlowStats>,
    /// Records each iteration's time as a latency (the end running the program as written).
    timed: bool,
    /// Its data operations move datagrams (a UDP group).
    datagrams: bool,
    sent: u64,
    received: u64,
    /// Counts per flow operation, published at the end of every step.
    ops: ProfileCounters,
    /// The operation under way's entry in `ops`, and when it began.
    current: Option<(usize, u64)>,
    /// The operation under way failed (a datagram lost): counted as failed when it ends.
    failed: bool,
    /// The open connection's data socket (a UDP group's UDP socket), whose buffers the flow
    /// reports; -1 while none is open.
    data_fd: i32,
}

impl Runner {
    /// A runner of `cursor` counting into `stats`; `timed` records iteration latencies (and
    /// gives up on datagrams that do not come), `datagrams` moves datagrams.
    pub(super) fn new(
        cursor: Cursor,
        stats: Arc<FlowStats>,
        timed: bool,
        datagrams: bool,
    ) -> Runner {
        Runner {
            cursor,
            doing: None,
            stats,
            timed,
            datagrams,
            sent: 0,
            received: 0,
            ops: ProfileCounters::default(),
            current: None,
            failed: false,
            data_fd: -1,
        }
    }

    /// Runs the program on `sock` (none while the connection is closed) until it blocks, its
    /// turn is over or the connection must be opened or closed.
    pub(super) fn step(&mut self, sock: Option<Carrier<'_>>, io: &mut Io<'_>) -> io::Result<Event> {
        let event = self.turn(sock, io);
        self.stats.publish(&self.ops);
        event
    }

    /// The clock is read once per flow operation, as it ends (and once as the turn begins):
    /// that reading is the operation's end and the next one's start, as rr's transactions
    /// share theirs.
    fn turn(&mut self, mut sock: Option<Carrier<'_>>, io: &mut Io<'_>) -> io::Result<Event> {
        let mut ops = 0;
        let mut now = clock::now_ns();
        loop {
            let doing = match self.doing {
                Some(d) => d,
                None => {
                    if ops >= OPS_PER_TURN {
                        return Ok(Event::Yield);
                    }
                    ops += 1;
                    if self.cursor.must_probe() {
                        if let Some(Carrier::Stream(w)) = sock.as_mut() {
                            if self.drain(w, io.rbuf)? {
                                return Ok(Event::PeerEnded);
                            }
                        }
                    }
                    let d = match self.cursor.next(now) {
                        Next::Do(a) => self.doing_of(a, now),
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
                _ => match self.move_data(doing, sock.as_mut(), io, now) {
                    Ok(Ok(left)) => left,
                    // A read the other end's close cut short, on the end running the program.
                    Ok(Err(Event::PeerEnded)) if self.timed && self.cursor.can_fail() => {
                        return Ok(self.broke(now, io.latency))
                    }
                    Ok(Err(e)) => return Ok(e),
                    Err(_) if self.cursor.can_fail() => return Ok(self.broke(now, io.latency)),
                    Err(e) => return Err(e),
                },
            };
            if left > 0 {
                self.doing = Some(match doing {
                    Doing::Write(_) => Doing::Write(left),
                    _ => Doing::Read(left),
                });
                return Ok(Event::Wait(None));
            }
            // The operation's own time runs to now, not to when this pass began.
            now = clock::now_ns();
            self.finish_op(now, io.latency);
        }
    }

    /// Moves operation `doing`'s data on `sock`: what is left of it, or the event that ends
    /// this turn.
    fn move_data(
        &mut self,
        doing: Doing,
        sock: Option<&mut Carrier<'_>>,
        io: &mut Io<'_>,
        now: u64,
    ) -> io::Result<Result<u64, Event>> {
        Ok(Ok(match doing {
            Doing::Write(n) => {
                let w = stream(sock)?;
                let left = self.write(w, io.wbuf, n)?;
                if left == 0 && !w.flush()? {
                    // TLS holds records the socket had no room for: send them first.
                    self.doing = Some(Doing::Write(0));
                    return Ok(Err(Event::Wait(None)));
                }
                left
            }
            Doing::Read(n) => match self.read(stream(sock)?, io.rbuf, n, waiting(io, now))? {
                Some(left) => left,
                None => {
                    self.doing = None;
                    return Ok(Err(Event::PeerEnded));
                }
            },
            Doing::Send(n) => match carrier::send(datagram(sock.as_deref())?, io.wbuf, n)? {
                Datagram::Moved(k) => self.add_sent(k as u64),
                Datagram::Blocked => return Ok(Err(Event::Wait(None))),
            },
            Doing::Recv(by) => match carrier::recv(datagram(sock.as_deref())?, io.rbuf)? {
                Datagram::Moved(k) => self.add_received(k),
                Datagram::Blocked if now >= by => self.lost(),
                Datagram::Blocked if by == u64::MAX => return Ok(Err(Event::Wait(None))),
                Datagram::Blocked => return Ok(Err(Event::Wait(Some(by)))),
            },
            Doing::Connect | Doing::Disconnect | Doing::Think(_) => 0,
        }))
    }

    /// The operation under way is over at `now`: counted, and the cursor moved on.
    fn finish_op(&mut self, now: u64, latency: &Latency) {
        self.doing = None;
        self.op_done(now, latency);
        let ended = self.cursor.done();
        self.count(ended, now, latency);
    }

    /// The operation under way failed and may (`can_fail`): counted as failed, and its
    /// connection given up (the flow drops it; a later operation opens a new one).
    fn broke(&mut self, now: u64, latency: &Latency) -> Event {
        self.failed = true;
        self.finish_op(now, latency);
        self.cursor.dropped();
        self.let_go();
        Event::Broken
    }

    /// Whether the program's operation under way may fail (`can_fail`).
    pub(super) fn can_fail(&self) -> bool {
        self.cursor.can_fail()
    }

    /// The connection [`Event::Connect`] asked for could not open, and the operation may fail:
    /// counted as failed, the flow still unconnected.
    pub(super) fn connect_failed(&mut self, latency: &Latency) {
        self.failed = true;
        self.finish_op(clock::now_ns(), latency);
        self.stats.publish(&self.ops);
    }

    /// The connection [`Event::Connect`] asked for is open, as `fd`; its data moves on
    /// `data_fd` (`fd` itself, or a UDP group's UDP socket).
    pub(super) fn connected(&mut self, fd: i32, data_fd: i32, latency: &Latency) {
        self.doing = None;
        // The sampler reads the TCP_INFO of a stream's connection; a UDP flow's carries no data.
        self.stats.set_fd(if self.datagrams { -1 } else { fd });
        self.data_fd = data_fd;
        if data_fd >= 0 {
            self.stats.set_buffers_granted(fd_buffers(data_fd));
        }
        self.op_done(clock::now_ns(), latency);
        self.cursor.connected();
        self.stats.publish(&self.ops);
    }

    /// The connection [`Event::Disconnect`] asked to close is closed.
    pub(super) fn disconnected(&mut self, latency: &Latency) {
        self.doing = None;
        self.let_go();
        let now = clock::now_ns();
        self.op_done(now, latency);
        let ended = self.cursor.disconnected();
        self.count(ended, now, latency);
        self.stats.publish(&self.ops);
    }

    /// Every flow reached the barrier [`Event::Barrier`] named.
    pub(super) fn pass_barrier(&mut self) {
        self.cursor.pass_barrier();
    }

    /// The other end closed the connection: true when that ended a timed transaction (the
    /// accepting end's way to learn of it), false when the program did not expect it.
    pub(super) fn peer_ended(&mut self) -> bool {
        self.doing = None;
        self.current = None;
        self.let_go();
        self.cursor.peer_ended()
    }

    /// The connection is given up, still open: its data socket's buffers as they stand at
    /// its close, and the sampler told to forget its socket before it closes.
    pub(super) fn let_go(&mut self) {
        if self.data_fd >= 0 {
            self.stats.set_buffers_end(fd_buffers(self.data_fd));
            self.data_fd = -1;
        }
        self.stats.set_fd(-1);
    }

    /// Reads and counts until the other end's close (`Ok(true)`) or an empty socket.
    pub(super) fn drain(&mut self, sock: &mut Wire, rbuf: &mut [u8]) -> io::Result<bool> {
        loop {
            match sock.read(rbuf) {
                Ok(0) => return Ok(true),
                Ok(n) => {
                    self.add_received(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes up to `want` bytes; what is left to write.
    fn write(&mut self, sock: &mut Wire, wbuf: &[u8], want: u64) -> io::Result<u64> {
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

    /// Counts a datagram of `n` bytes sent; nothing is left of the operation.
    fn add_sent(&mut self, n: u64) -> u64 {
        self.sent += n;
        self.stats.set_sent(self.sent);
        self.add_bytes(n);
        0
    }

    /// Counts the datagram the operation under way waited for as lost; nothing is left of it.
    fn lost(&mut self) -> u64 {
        self.failed = true;
        0
    }

    /// Reads up to `want` bytes, never more; what is left to read, or `None` at the other
    /// end's close. With a deadline `wait` ns away (0: none), the first read of this call may
    /// wait for data in the kernel (`crate::recv_wait`); the rest only take what is there.
    fn read(
        &mut self,
        sock: &mut Wire,
        rbuf: &mut [u8],
        want: u64,
        mut wait: u64,
    ) -> io::Result<Option<u64>> {
        let mut left = want;
        while left > 0 {
            let n = left.min(rbuf.len() as u64) as usize;
            let r = match wait {
                0 => sock.read(&mut rbuf[..n]),
                w => sock.read_waiting(&mut rbuf[..n], w),
            };
            wait = 0;
            match r {
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

    /// Counts `n` bytes received; nothing is left of a datagram operation.
    fn add_received(&mut self, n: usize) -> u64 {
        self.received += n as u64;
        self.stats.set_received(self.received);
        self.add_bytes(n as u64);
        0
    }

    /// Counts bytes the operation under way moved.
    fn add_bytes(&mut self, n: u64) {
        if let Some((i, _)) = self.current {
            self.ops.ops[i].bytes += n;
        }
    }

    /// Counts the operation under way as done at `now` (its time into `latency`), or as
    /// failed when it did not complete.
    fn op_done(&mut self, now: u64, latency: &Latency) {
        let failed = std::mem::take(&mut self.failed);
        if let Some((i, started)) = self.current.take() {
            let o = &mut self.ops.ops[i];
            if failed {
                o.failed += 1;
            } else {
                let ns = now.saturating_sub(started);
                o.count += 1;
                o.ns += ns;
                latency.record_op(i, ns);
            }
        }
    }

    /// Counts an iteration that ended at `now` (it began at `started`), into `latency` too.
    fn count(&mut self, ended: Option<u64>, now: u64, latency: &Latency) {
        let Some(started) = ended else {
            return;
        };
        if self.timed {
            latency.record(now.saturating_sub(started));
        }
        self.stats.set_transactions(self.cursor.iterations());
        self.stats.touch(now);
    }
}

impl Runner {
    /// The action as an operation under way, started at `now`.
    fn doing_of(&self, a: Action, now: u64) -> Doing {
        match a {
            Action::Connect => Doing::Connect,
            Action::Disconnect => Doing::Disconnect,
            Action::Write(n) if self.datagrams => Doing::Send(n),
            Action::Read(_) if self.datagrams => Doing::Recv(match self.timed {
                true => now.saturating_add(RECV_TIMEOUT_NS),
                false => u64::MAX,
            }),
            Action::Write(n) => Doing::Write(n),
            Action::Read(n) => Doing::Read(n),
            Action::Think(ns) => Doing::Think(now.saturating_add(ns)),
        }
    }
}

/// How long from `now` a read may wait in the kernel: until the worker's deadline for a flow
/// that may wait in its reads (`Io::wait_until`, set for a worker's only flow), 0 for none.
/// [`Wire::read_waiting`] waits only on a clear connection and not too near the deadline.
fn waiting(io: &Io<'_>, now: u64) -> u64 {
    io.wait_until.saturating_sub(now)
}

#[cfg(test)]
mod tests;
