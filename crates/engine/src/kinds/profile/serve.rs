//! The accepting end: a listener whose connections must open with the test's hello naming a
//! flow; each then runs that flow's mirror program from where the flow's previous connection
//! left it. A flow's place ([`Runner`]) lives in its slot between connections, so a flow that
//! disconnects and connects again carries on, sizes and counts included. Strangers (a wrong
//! hello, or none within [`HELLO_TIMEOUT`]) are dropped unanswered and uncounted.

use super::barrier::{check_go, read_go};
use super::carrier::{self, Carrier, UDP_PORT_LEN};
use super::runner::{Event, Runner};
use super::TLS_READ;
use crate::clock;
use crate::kind::{Flow, Io, Step, READ_WRITE};
use crate::sockopt;
use crate::tls::{Handshake, TlsEnd, Wire};
use fathom_proto::plan::SocketOptions;
use fathom_proto::DataHello;
use mio::net::UdpSocket;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

/// Connections accepted per run before yielding to the worker's other flows.
const ACCEPTS_PER_TURN: u32 = 32;
/// How long an accepted connection may take to send its hello (ns).
const HELLO_TIMEOUT: u64 = 5_000_000_000;
/// How soon a connection whose flow's previous one is still closing looks again (ns).
const RETRY_NS: u64 = 200_000;
/// Bytes after the test's hello naming the transaction the connection opens in (big-endian):
/// the mirror of a timed transaction whose iterations each connect and disconnect learns
/// from it that the transaction ended.
pub(super) const PLACE_LEN: usize = 4;
/// The opening of a profile's connection: the hello, the transaction, a UDP flow's port.
pub(super) const OPENING: usize = DataHello::LEN + PLACE_LEN + UDP_PORT_LEN;

/// A flow's place between its connections.
pub(super) enum Slot {
    /// Waiting for the flow's next connection.
    Ready(Box<Runner>),
    /// A connection runs it.
    Held,
    /// Its program is over (or failed): later connections naming it are strangers.
    Finished,
}

/// What every connection of the test must show, and the flows' places.
pub(super) struct Shared {
    /// The test's cookie.
    pub cookie: [u8; 16],
    /// Options set on every accepted connection.
    pub opts: SocketOptions,
    /// One per flow of the test, by flow id.
    pub slots: Mutex<Vec<Slot>>,
    /// The flows' data operations move datagrams (a UDP group).
    pub datagrams: bool,
    /// A TLS group: this end's configuration, for a session per connection.
    pub tls: Option<TlsEnd>,
    /// The test has one flow: its mirror may wait for data in its connection's receive, as a
    /// worker's only flow does (the listener beside it has no other flow to accept).
    pub lone: bool,
}

impl Shared {
    fn take(&self, flow: u32) -> Taken {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        match slots.get_mut(flow as usize) {
            Some(s @ Slot::Ready(_)) => match std::mem::replace(s, Slot::Held) {
                Slot::Ready(r) => Taken::Runner(r),
                _ => Taken::Gone,
            },
            Some(Slot::Held) => Taken::Busy,
            _ => Taken::Gone,
        }
    }

    fn put(&self, flow: u32, slot: Slot) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slots.get_mut(flow as usize) {
            *s = slot;
        }
    }
}

/// How far an accepted connection is from carrying its flow's program.
enum Stage {
    /// Reading and checking the hello.
    Hello,
    /// A UDP flow: sending this end's UDP port (sent so far).
    Answer([u8; UDP_PORT_LEN], usize),
    /// A TLS group: the handshake.
    Shaking(Box<Handshake>),
    /// Carrying the program.
    Open,
}

/// What a connection found in its flow's slot.
enum Taken {
    Runner(Box<Runner>),
    /// The flow's previous connection is still closing.
    Busy,
    /// No such flow, or its program is over.
    Gone,
}

/// The acceptor flow of `listener`.
pub(super) fn acceptor(listener: socket2::Socket, shared: Shared) -> io::Result<Box<dyn Flow>> {
    listener.set_nonblocking(true)?;
    Ok(Box::new(Acceptor {
        listener: mio::net::TcpListener::from_std(listener.into()),
        shared: Arc::new(shared),
    }))
}

/// The listener: starts a [`Served`] flow per accepted connection.
struct Acceptor {
    listener: mio::net::TcpListener,
    shared: Arc<Shared>,
}

impl Flow for Acceptor {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(&mut self.listener, t, mio::Interest::READABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        for _ in 0..ACCEPTS_PER_TURN {
            match self.listener.accept() {
                Ok((sock, _)) => {
                    sockopt::apply_connected(sock.as_raw_fd(), &self.shared.opts)?;
                    io.spawned.push(Box::new(Served {
                        wire: Wire::clear(sock),
                        shared: self.shared.clone(),
                        hello: [0; OPENING],
                        got: 0,
                        until: clock::now_ns().saturating_add(HELLO_TIMEOUT),
                        flow: None,
                        stage: Stage::Hello,
                        udp: None,
                        runner: None,
                        wake: None,
                        gos: 0,
                    }));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => return Ok(Step::Wait),
                Err(e) => return Err(e),
            }
        }
        Ok(Step::Again)
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Done)
    }
}

/// One accepted connection: its hello, then its flow's mirror program.
struct Served {
    wire: Wire,
    shared: Arc<Shared>,
    /// The hello, the transaction, and a UDP flow's port after them.
    hello: [u8; OPENING],
    got: usize,
    /// Monotonic ns by which the hello must be complete.
    until: u64,
    /// The flow its hello named.
    flow: Option<u32>,
    /// How far the connection is from carrying the program.
    stage: Stage,
    /// A UDP flow's socket, connected to the other end's.
    udp: Option<UdpSocket>,
    /// The flow's place, while this connection runs it.
    runner: Option<Box<Runner>>,
    wake: Option<u64>,
    /// A UDP flow: barrier go bytes read off its connection before its mirror got there.
    gos: u32,
}

impl Served {
    /// Reads and checks the hello (and a UDP flow's port after it): the flow it names,
    /// `Ok(None)` while it is incomplete, an error for a stranger.
    fn prove(&mut self) -> io::Result<Option<u32>> {
        if let Some(f) = self.flow {
            return Ok(Some(f));
        }
        let want = match self.shared.datagrams {
            true => self.hello.len(),
            false => DataHello::LEN + PLACE_LEN,
        };
        while self.got < want {
            match self.wire.socket().read(&mut self.hello[self.got..want]) {
                Ok(0) => return Err(stranger()),
                Ok(n) => self.got += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if clock::now_ns() >= self.until {
                        return Err(stranger());
                    }
                    self.wake = Some(self.until);
                    return Ok(None);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        match DataHello::read_from(&mut &self.hello[..]) {
            Ok(h) if h.cookie == self.shared.cookie => {
                self.flow = Some(h.flow);
                Ok(Some(h.flow))
            }
            _ => Err(stranger()),
        }
    }

    /// The transaction (from 0) the proven hello says the connection opens in.
    fn place(&self) -> usize {
        let at = DataHello::LEN;
        let b = [
            self.hello[at],
            self.hello[at + 1],
            self.hello[at + 2],
            self.hello[at + 3],
        ];
        u32::from_be_bytes(b) as usize
    }

    /// Hands the flow's place back: ready for its next connection, or finished.
    fn release(&mut self, finished: bool) {
        if let (Some(flow), Some(r)) = (self.flow, self.runner.take()) {
            let slot = if finished {
                Slot::Finished
            } else {
                Slot::Ready(r)
            };
            self.shared.put(flow, slot);
        }
    }

    /// Takes the connection from its hello to carrying the program (a UDP flow's port
    /// exchange, a TLS group's handshake): `Ok(false)` while it waits for the socket.
    fn open(&mut self, io: &Io<'_>) -> io::Result<bool> {
        loop {
            self.stage = match std::mem::replace(&mut self.stage, Stage::Open) {
                Stage::Hello if self.shared.datagrams => {
                    let sock = self.wire.socket();
                    let udp = carrier::open_udp(sock.local_addr()?, &self.shared.opts, io)?;
                    let at = DataHello::LEN + PLACE_LEN;
                    let port = [self.hello[at], self.hello[at + 1]];
                    udp.connect(carrier::peer_of(sock.peer_addr()?, port)?)?;
                    let ours = carrier::port_bytes(&udp)?;
                    self.udp = Some(udp);
                    Stage::Answer(ours, 0)
                }
                Stage::Hello => match &self.shared.tls {
                    Some(end) => Stage::Shaking(Box::new(end.begin()?)),
                    None => Stage::Open,
                },
                Stage::Answer(port, sent) if sent < UDP_PORT_LEN => {
                    match self.wire.socket().write(&port[sent..]) {
                        Ok(k) => Stage::Answer(port, sent + k),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            self.stage = Stage::Answer(port, sent);
                            return Ok(false);
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                            Stage::Answer(port, sent)
                        }
                        Err(e) => return Err(e),
                    }
                }
                Stage::Answer(..) => Stage::Open,
                Stage::Shaking(mut h) => {
                    if !h.advance(self.wire.socket())? {
                        self.stage = Stage::Shaking(h);
                        return Ok(false);
                    }
                    let (conn, _) = h.finish();
                    let end = self
                        .shared
                        .tls
                        .clone()
                        .ok_or_else(|| io::Error::other("no TLS end"))?;
                    self.wire.secure(conn, end, TLS_READ);
                    Stage::Open
                }
                Stage::Open => return Ok(true),
            };
        }
    }

    /// The mirror program's next event, `None` once it has none: the runner's step (a group's
    /// lone flow may wait in the kernel's receive until the test's end), where a UDP flow's
    /// connection closing is the other end's word.
    fn next_event(&mut self, io: &mut Io<'_>) -> io::Result<Option<Event>> {
        let Some(runner) = self.runner.as_mut() else {
            return Ok(None);
        };
        let carrier = match &self.udp {
            Some(u) => Carrier::Datagram(u),
            None => Carrier::Stream(&mut self.wire),
        };
        let worker_wait = io.wait_until;
        if self.shared.lone {
            io.wait_until = io.end_ns;
        }
        let step = runner.step(Some(carrier), io);
        io.wait_until = worker_wait;
        Ok(Some(match step? {
            // A UDP flow's connection carries no data, only barriers' go bytes.
            Event::Wait(_) | Event::Yield
                if self.udp.is_some() && watch(&mut self.wire, &mut self.gos)? =>
            {
                Event::PeerEnded
            }
            e => e,
        }))
    }

    /// Runs the flow's mirror program on this connection.
    fn serve(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        loop {
            let Some(event) = self.next_event(io)? else {
                return Ok(Step::Done);
            };
            let Some(runner) = self.runner.as_mut() else {
                return Ok(Step::Done);
            };
            match event {
                Event::Connect => {
                    let data = self
                        .udp
                        .as_ref()
                        .map_or(self.wire.as_raw_fd(), |u| u.as_raw_fd());
                    runner.connected(self.wire.as_raw_fd(), data, io.latency)
                }
                Event::Disconnect => {
                    if !runner.drain(&mut self.wire, io.rbuf)? || !self.wire.close()? {
                        return Ok(Step::Wait);
                    }
                    runner.disconnected(io.latency);
                    self.release(false);
                    return Ok(Step::Done);
                }
                Event::Wait(at) => {
                    self.wake = at;
                    return Ok(Step::Wait);
                }
                Event::Yield => return Ok(Step::Again),
                Event::End => {
                    self.release(true);
                    return Ok(Step::Done);
                }
                // A failure it may have (`can_fail`) was counted: the connection is given up
                // and the program carries on with the flow's next one.
                Event::Broken => {
                    self.release(false);
                    return Ok(Step::Done);
                }
                Event::Barrier(_) => {
                    if self.gos > 0 {
                        self.gos -= 1;
                    } else if !read_go(&mut self.wire)? {
                        return Ok(Step::Wait);
                    }
                    runner.pass_barrier();
                }
                // Datagrams lost on the way may leave a mirror behind its program: it
                // catches up to where the other end closed the connection.
                Event::PeerEnded if self.udp.is_some() => {
                    let _ = self.wire.close();
                    let over = runner.catch_up(io.latency)?;
                    self.release(over);
                    return Ok(Step::Done);
                }
                Event::PeerEnded if runner.peer_ended() => {
                    let _ = self.wire.close();
                    self.release(false);
                    return Ok(Step::Done);
                }
                Event::PeerEnded => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the other end closed the connection mid-program",
                    ))
                }
            }
        }
    }
}

impl Flow for Served {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.wire.socket(), t, READ_WRITE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.wake = None;
        let Some(flow) = self.prove()? else {
            return Ok(Step::Wait);
        };
        if self.runner.is_none() {
            match self.shared.take(flow) {
                Taken::Runner(mut r) => {
                    r.follow(self.place());
                    self.runner = Some(r);
                }
                Taken::Busy => {
                    self.wake = Some(clock::now_ns().saturating_add(RETRY_NS));
                    return Ok(Step::Wait);
                }
                Taken::Gone => return Err(stranger()),
            }
        }
        if !self.open(io)? {
            return Ok(Step::Wait);
        }
        self.serve(io)
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        // The other end finished its programs: what is left is its connections closing.
        Ok(Step::Wait)
    }

    fn timer(&self) -> Option<u64> {
        self.wake
    }
}

impl Drop for Served {
    /// A connection that failed mid-program leaves its flow finished, so that no later
    /// connection waits for it.
    fn drop(&mut self) {
        self.release(true);
    }
}

/// Reads a UDP flow's connection: barrier go bytes are counted into `gos` for its mirror;
/// `Ok(true)` at the other end's close.
fn watch(wire: &mut Wire, gos: &mut u32) -> io::Result<bool> {
    let mut bytes = [0; 64];
    loop {
        match wire.socket().read(&mut bytes) {
            Ok(0) => return Ok(true),
            Ok(n) => *gos = gos.saturating_add(check_go(&bytes[..n])?),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn stranger() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a connection without the test's hello",
    )
}
