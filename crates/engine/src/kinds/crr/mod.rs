//! TCP connect/request/response: every transaction opens a connection, sends the request, reads
//! the response and closes (the asking side closes first, as netperf's TCP_CRR does). The
//! latency runs from the start of connect() to the last byte of the response.
//!
//! Every connection opens with the test's hello (its cookie and the asking flow's id, in clear,
//! in the same segment as the request or the TLS ClientHello); the answering side ([`answer`])
//! checks it before it does anything else for the connection and drops strangers unanswered and
//! uncounted.

mod answer;

use super::pacer::Pacer;
use crate::kind::{wrong_sockets, Flow, Io, Setup, Sockets, Step, READ_WRITE};
use crate::measure::counters::FlowStats;
use crate::tls::{TlsEnd, Wire};
use crate::{clock, sockopt};
use fathom_proto::plan::{KindId, Limit, SocketOptions};
use fathom_proto::DataHello;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

/// Transactions (or accepts) per run before yielding to the worker's other flows.
const PER_TURN: u64 = 32;
/// Ciphertext a TLS transaction reads per system call: one full record.
const TLS_READ: usize = 16_384 + 256;

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
            let total = match s.plan.limit {
                Limit::Transactions(n) => Some(n),
                _ => None,
            };
            let answer = answer::Answer {
                cookie,
                flows: s.plan.flows.len() as u32,
                tls: s.tls.cloned(),
                opts: s.plan.socket.clone(),
                stats: s.stats[0].clone(),
                // A 0-byte request (refused by plan validation) must not divide by zero.
                req: (rr.request as u64).max(1),
                resp: rr.response as u64,
            };
            Ok(vec![answer::acceptor(listener, answer, total)?])
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
        let sock = dial(self.server, &self.opts, io)?;
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
            if !established(a.sock.socket())? {
                return Ok(false);
            }
            a.connected = true;
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

/// Opens a non-blocking connection to `server` with `opts`, registered under the running
/// flow's token; it is established once [`established`] says so.
pub(super) fn dial(
    server: SocketAddr,
    opts: &SocketOptions,
    io: &Io<'_>,
) -> io::Result<mio::net::TcpStream> {
    let sock = Socket::new(
        Domain::for_address(server),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    sockopt::apply(&sock, opts)?;
    sock.set_nonblocking(true)?;
    match sock.connect(&server.into()) {
        Err(e) if e.raw_os_error() != Some(libc::EINPROGRESS) => return Err(e),
        _ => {}
    }
    let mut sock = mio::net::TcpStream::from_std(sock.into());
    io.registry.register(&mut sock, io.token, READ_WRITE)?;
    Ok(sock)
}

/// Whether a connection [`dial`] opened is established: `Ok(false)` while it is still under
/// way, its error once it failed.
pub(super) fn established(sock: &mio::net::TcpStream) -> io::Result<bool> {
    if let Some(e) = sock.take_error()? {
        return Err(e);
    }
    match sock.peer_addr() {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) => Err(e),
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
