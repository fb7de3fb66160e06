//! TCP connect/request/response: every transaction opens a connection, sends the request, reads
//! the response and closes (the asking side closes first, as netperf's TCP_CRR does). The
//! latency runs from the start of connect() to the last byte of the response.
//!
//! Every connection opens with the test's hello (its cookie and the asking flow's id, in clear,
//! in the same segment as the request or the TLS ClientHello): the answering side reads it
//! before it does anything else for the connection, and drops strangers unanswered and
//! uncounted, after [`HELLO_TIMEOUT`] at most; beyond the test's flows plus [`SPARE_UNPROVEN`]
//! waiting at once, a new connection cuts off the oldest that has not proven itself.

use super::pacer::Pacer;
use crate::kind::{wrong_sockets, Flow, Io, Setup, Sockets, Step, READ_WRITE};
use crate::measure::counters::FlowStats;
use crate::tls::{TlsEnd, Wire};
use crate::{clock, sockopt};
use fathom_proto::plan::{KindId, Limit, SocketOptions};
use fathom_proto::DataHello;
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Transactions (or accepts) per run before yielding to the worker's other flows.
const PER_TURN: u64 = 32;
/// Ciphertext a TLS transaction reads per system call: one full record.
const TLS_READ: usize = 16_384 + 256;
/// How often a count-limited acceptor checks whether the count is reached.
const COUNT_CHECK_NS: u64 = 10_000_000;
/// How long an accepted connection may take to send its hello.
pub const HELLO_TIMEOUT: u64 = 5_000_000_000;
/// Connections waiting to prove themselves beyond one per flow of the test.
pub const SPARE_UNPROVEN: usize = 128;

/// Builds this side's flows of the crr kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
    let rr = s.rr_options()?;
    match sockets {
        Sockets::Connect(server, cookie) => Ok(s
            .own_flows()
            .filter(|f| s.side.leads(f.dir))
            .map(|f| {
                let (i, n) = s.place(f);
                Box::new(Client {
                    server,
                    hello: DataHello { cookie, flow: f.id }.encode(),
                    tls: s.tls.cloned(),
                    opts: s.plan.socket.clone(),
                    stats: s.stats_of(f.id),
                    pacer: Pacer::new(s.plan, &rr, i, n),
                    req: rr.request as u64,
                    resp: rr.response as u64,
                    conn: None,
                    tx: 0,
                }) as Box<dyn Flow>
            })
            .collect()),
        Sockets::Listen(listener, cookie) => {
            listener.set_nonblocking(true)?;
            let total = match s.plan.limit {
                Limit::Transactions(n) => Some(n),
                _ => None,
            };
            Ok(vec![Box::new(Acceptor {
                listener: mio::net::TcpListener::from_std(listener.into()),
                test: Arc::new(Test {
                    cookie,
                    flows: s.plan.flows.len() as u32,
                    tls: s.tls.cloned(),
                }),
                unproven: VecDeque::new(),
                room: s.plan.flows.len() + SPARE_UNPROVEN,
                opts: s.plan.socket.clone(),
                stats: s.stats[0].clone(),
                // A 0-byte request (refused by plan validation) must not divide by zero.
                req: (rr.request as u64).max(1),
                resp: rr.response as u64,
                total,
            })])
        }
        _ => Err(wrong_sockets(KindId::Crr)),
    }
}

/// One transaction's connection on the asking side.
struct Attempt {
    sock: Wire,
    start: u64,
    connected: bool,
    /// Bytes of the hello sent so far.
    hello_sent: usize,
    to_send: u64,
    got: u64,
}

/// The asking side: sequential connect/request/response/close.
struct Client {
    server: SocketAddr,
    /// What opens every connection.
    hello: [u8; DataHello::LEN],
    /// TLS tests: every transaction is a new session with a full handshake.
    tls: Option<TlsEnd>,
    opts: SocketOptions,
    stats: Arc<FlowStats>,
    pacer: Pacer,
    req: u64,
    resp: u64,
    conn: Option<Attempt>,
    tx: u64,
}

impl Client {
    fn connect(&self, start: u64, io: &Io<'_>) -> io::Result<Attempt> {
        let sock = Socket::new(
            Domain::for_address(self.server),
            Type::STREAM,
            Some(Protocol::TCP),
        )?;
        sockopt::apply(&sock, &self.opts)?;
        sock.set_nonblocking(true)?;
        match sock.connect(&self.server.into()) {
            Err(e) if e.raw_os_error() != Some(libc::EINPROGRESS) => return Err(e),
            _ => {}
        }
        let mut sock = mio::net::TcpStream::from_std(sock.into());
        io.registry.register(&mut sock, io.token, READ_WRITE)?;
        let sock = match &self.tls {
            Some(end) => Wire::tls(sock, end.session()?, end.clone(), TLS_READ),
            None => Wire::clear(sock),
        };
        Ok(Attempt {
            sock,
            start,
            connected: false,
            hello_sent: 0,
            to_send: self.req,
            got: 0,
        })
    }

    /// Advances the current attempt, opening it with `hello`; `Ok(true)` when its response is
    /// complete.
    fn advance(a: &mut Attempt, io: &mut Io<'_>, hello: &[u8], resp: u64) -> io::Result<bool> {
        if !a.connected {
            if let Some(e) = a.sock.socket().take_error()? {
                return Err(e);
            }
            match a.sock.socket().peer_addr() {
                Ok(_) => a.connected = true,
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        while a.hello_sent < hello.len() {
            match send_more(a.sock.socket().as_raw_fd(), &hello[a.hello_sent..]) {
                Ok(k) => a.hello_sent += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        while a.to_send > 0 {
            let n = a.to_send.min(io.wbuf.len() as u64) as usize;
            match a.sock.write(&io.wbuf[..n]) {
                Ok(k) => a.to_send -= k as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        if !a.sock.flush()? {
            return Ok(false);
        }
        loop {
            match a.sock.read(io.rbuf) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed before answering",
                    ))
                }
                Ok(n) => {
                    a.got += n as u64;
                    if a.got >= resp {
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }
}

impl Flow for Client {
    fn register(&mut self, _: &mio::Registry, _: mio::Token) -> io::Result<()> {
        Ok(())
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.tx;
        loop {
            let now = clock::now_ns();
            if now >= io.end_ns || self.pacer.finished() {
                return Ok(Step::Done);
            }
            if self.conn.is_none() {
                let Some(start) = self.pacer.issue(now) else {
                    return Ok(Step::Wait);
                };
                self.conn = Some(self.connect(start, io)?);
            }
            let a = self.conn.as_mut().expect("an attempt in progress");
            match Self::advance(a, io, &self.hello, self.resp) {
                Ok(true) => {}
                Ok(false) => return Ok(Step::Wait),
                // The answering side may have stopped at the time limit with this one unanswered.
                Err(_) if clock::now_ns() >= io.end_ns => return Ok(Step::Done),
                Err(e) => return Err(e),
            }
            let done = clock::now_ns();
            io.latency.record(done.saturating_sub(a.start));
            let mut a = self.conn.take().expect("an attempt in progress");
            if a.sock.is_tls() {
                // End the session properly (one more small write), as a TLS client would.
                a.sock.close()?;
            }
            io.registry.deregister(a.sock.socket())?;
            drop(a);
            self.pacer.completed();
            self.tx += 1;
            self.stats.set_transactions(self.tx);
            self.stats.touch(done);
            if self.tx - first >= PER_TURN {
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        if let Some(mut a) = self.conn.take() {
            let _ = io.registry.deregister(a.sock.socket());
        }
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        self.pacer.timer()
    }
}

/// What every connection of the test must show, and how to answer it.
struct Test {
    cookie: [u8; 16],
    flows: u32,
    tls: Option<TlsEnd>,
}

/// The answering side's listener: starts a [`Served`] flow per accepted connection.
struct Acceptor {
    listener: mio::net::TcpListener,
    test: Arc<Test>,
    /// Connections that have not proven themselves yet (their flag set), oldest first.
    unproven: VecDeque<(Arc<AtomicBool>, RawFd)>,
    /// Most of them at once.
    room: usize,
    opts: SocketOptions,
    stats: Arc<FlowStats>,
    req: u64,
    resp: u64,
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
        sockopt::apply_connected(sock.as_raw_fd(), &self.opts)?;
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
            test: self.test.clone(),
            sock: Wire::clear(sock),
            stats: self.stats.clone(),
            req: self.req,
            resp: self.resp,
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
        if self.total.is_some_and(|t| self.stats.transactions() >= t) {
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
    test: Arc<Test>,
    sock: Wire,
    stats: Arc<FlowStats>,
    req: u64,
    resp: u64,
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
            Ok(h) if h.cookie == self.test.cookie && h.flow < self.test.flows => {}
            _ => return Proof::Stranger,
        }
        self.opening = None;
        if let Some(end) = &self.test.tls {
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
                        self.stats.add_sent(k as u64);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                    Err(e) => return Err(e),
                }
            }
            match self.sock.read(io.rbuf) {
                Ok(0) => return Ok(Step::Done),
                Ok(n) => {
                    self.stats.add_received(n as u64);
                    let before = self.got / self.req;
                    self.got += n as u64;
                    let answered = self.got / self.req - before;
                    if answered > 0 {
                        self.to_send += answered * self.resp;
                        self.stats.add_transactions(answered);
                        self.stats.touch(clock::now_ns());
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

/// Sends `bytes` held back until the next write (MSG_MORE), so that the hello and what follows
/// leave in one segment.
fn send_more(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: `bytes` is valid for its length; `fd` is the caller's open socket.
    let n = unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_MORE | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
