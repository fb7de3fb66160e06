//! crr's answering side: a listener whose every accepted connection must open with the test's
//! hello before anything is done for it (no TLS session, no answer, no count); strangers are
//! dropped after [`HELLO_TIMEOUT`] at most, and beyond the test's flows plus [`SPARE_UNPROVEN`]
//! waiting at once, a new connection cuts off the oldest that has not proven itself.

use super::{PER_TURN, TLS_READ};
use crate::kind::{Flow, Io, Step, READ_WRITE};
use crate::measure::counters::FlowStats;
use crate::tls::{TlsEnd, Wire};
use crate::{clock, sockopt};
use fathom_proto::plan::SocketOptions;
use fathom_proto::DataHello;
use socket2::Socket;
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How often a count-limited acceptor checks whether the count is reached.
const COUNT_CHECK_NS: u64 = 10_000_000;
/// How long an accepted connection may take to send its hello (ns).
pub const HELLO_TIMEOUT: u64 = 5_000_000_000;
/// Connections waiting to prove themselves beyond one per flow of the test.
pub const SPARE_UNPROVEN: usize = 128;

/// What every connection of the test must show, and how to answer it.
pub(super) struct Answer {
    /// The test's cookie.
    pub cookie: [u8; 16],
    /// How many flows the test has (hellos name one of them).
    pub flows: u32,
    /// TLS tests: this end's configuration, for a session per proven connection.
    pub tls: Option<TlsEnd>,
    /// Options set on every accepted connection.
    pub opts: SocketOptions,
    /// The counters every answered transaction goes to.
    pub stats: Arc<FlowStats>,
    /// Request size (at least 1).
    pub req: u64,
    /// Response size.
    pub resp: u64,
}

/// The acceptor flow of `listener`, answering as `answer` says; it ends once `total`
/// transactions (if any) were answered.
pub(super) fn acceptor(
    listener: Socket,
    answer: Answer,
    total: Option<u64>,
) -> io::Result<Box<dyn Flow>> {
    listener.set_nonblocking(true)?;
    Ok(Box::new(Acceptor {
        listener: mio::net::TcpListener::from_std(listener.into()),
        room: answer.flows as usize + SPARE_UNPROVEN,
        answer: Arc::new(answer),
        unproven: VecDeque::new(),
        total,
    }))
}

/// The answering side's listener: starts a [`Served`] flow per accepted connection.
struct Acceptor {
    listener: mio::net::TcpListener,
    answer: Arc<Answer>,
    /// Connections that have not proven themselves yet (their flag set), oldest first.
    unproven: VecDeque<(Arc<AtomicBool>, RawFd)>,
    /// Most of them at once.
    room: usize,
    total: Option<u64>,
}

impl Acceptor {
    /// Makes room for one more unproven connection, cutting off the oldest when there is none.
    fn make_room(&mut self) {
        if self.unproven.len() >= self.room {
            self.unproven
                .retain(|(waiting, _)| waiting.load(Ordering::Relaxed));
            if self.unproven.len() >= self.room {
                self.cut_oldest();
            }
        }
    }

    /// Ends the oldest unproven connection; false when there is none.
    fn cut_oldest(&mut self) -> bool {
        while let Some((waiting, fd)) = self.unproven.pop_front() {
            if waiting.swap(false, Ordering::Relaxed) {
                // SAFETY: the flag was still set, so the connection's flow (on this thread)
                // holds `fd` open; shutting it down makes that flow end at its next run.
                unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
                return true;
            }
        }
        false
    }

    fn serve(&mut self, sock: mio::net::TcpStream) -> io::Result<Box<dyn Flow>> {
        sockopt::apply_connected(sock.as_raw_fd(), &self.answer.opts)?;
        self.make_room();
        let waiting = Arc::new(AtomicBool::new(true));
        self.unproven.push_back((waiting.clone(), sock.as_raw_fd()));
        Ok(Box::new(Served {
            opening: Some(Opening {
                hello: [0; DataHello::LEN],
                got: 0,
                until: clock::now_ns() + HELLO_TIMEOUT,
                waiting,
            }),
            answer: self.answer.clone(),
            sock: Wire::clear(sock),
            got: 0,
            to_send: 0,
        }))
    }
}

impl Flow for Acceptor {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(&mut self.listener, t, mio::Interest::READABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        if self
            .total
            .is_some_and(|t| self.answer.stats.transactions() >= t)
        {
            return Ok(Step::Done);
        }
        for _ in 0..PER_TURN {
            match self.listener.accept() {
                Ok((sock, _)) => {
                    let served = self.serve(sock)?;
                    io.spawned.push(served);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Out of descriptors, a stranger makes room if there is one.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    if !self.cut_oldest() {
                        return Ok(Step::Wait);
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => return Ok(Step::Wait),
                Err(e) => return Err(e),
            }
        }
        Ok(Step::Again)
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        self.total.map(|_| clock::now_ns() + COUNT_CHECK_NS)
    }
}

/// An accepted connection's hello, until it has proven itself.
struct Opening {
    hello: [u8; DataHello::LEN],
    got: usize,
    /// Monotonic ns by which the hello must be complete.
    until: u64,
    /// Set while the connection waits to prove itself (the acceptor may cut it off then).
    waiting: Arc<AtomicBool>,
}

impl Drop for Opening {
    fn drop(&mut self) {
        self.waiting.store(false, Ordering::Relaxed);
    }
}

/// Where an accepted connection stands with its hello.
enum Proof {
    Proven,
    Waiting,
    Stranger,
}

/// One accepted connection: check its hello, read the request, answer, wait for the asker to
/// close.
struct Served {
    /// Until the hello is checked.
    opening: Option<Opening>,
    answer: Arc<Answer>,
    sock: Wire,
    got: u64,
    to_send: u64,
}

impl Served {
    /// Reads and checks the hello; once it is the test's, starts TLS for TLS tests.
    fn prove(&mut self) -> Proof {
        let Some(o) = self.opening.as_mut() else {
            return Proof::Proven;
        };
        while o.got < o.hello.len() {
            match self.sock.read(&mut o.hello[o.got..]) {
                Ok(0) => return Proof::Stranger,
                Ok(n) => o.got += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return match clock::now_ns() < o.until {
                        true => Proof::Waiting,
                        false => Proof::Stranger,
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Proof::Stranger,
            }
        }
        match DataHello::read_from(&mut &o.hello[..]) {
            Ok(h) if h.cookie == self.answer.cookie && h.flow < self.answer.flows => {}
            _ => return Proof::Stranger,
        }
        self.opening = None;
        if let Some(end) = &self.answer.tls {
            match end.session() {
                Ok(c) => self.sock.secure(c, end.clone(), TLS_READ),
                Err(_) => return Proof::Stranger,
            }
        }
        Proof::Proven
    }
}

impl Flow for Served {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, READ_WRITE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        match self.prove() {
            Proof::Proven => {}
            Proof::Waiting => return Ok(Step::Wait),
            Proof::Stranger => return Ok(Step::Done),
        }
        loop {
            if !self.sock.flush()? {
                return Ok(Step::Wait);
            }
            while self.to_send > 0 {
                let n = self.to_send.min(io.wbuf.len() as u64) as usize;
                match self.sock.write(&io.wbuf[..n]) {
                    Ok(k) => {
                        self.to_send -= k as u64;
                        self.answer.stats.add_sent(k as u64);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                    Err(e) => return Err(e),
                }
            }
            match self.sock.read(io.rbuf) {
                Ok(0) => return Ok(Step::Done),
                Ok(n) => {
                    self.answer.stats.add_received(n as u64);
                    let before = self.got / self.answer.req;
                    self.got += n as u64;
                    let answered = self.got / self.answer.req - before;
                    if answered > 0 {
                        self.to_send += answered * self.answer.resp;
                        self.answer.stats.add_transactions(answered);
                        self.answer.stats.touch(clock::now_ns());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) => return Err(e),
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        self.opening.as_ref().map(|o| o.until)
    }
}
