//! The accepting end: a listener whose connections must open with the test's hello naming a
//! flow; each then runs that flow's mirror program from where the flow's previous connection
//! left it. A flow's place ([`Runner`]) lives in its slot between connections, so a flow that
//! disconnects and connects again carries on, sizes and counts included. Strangers (a wrong
//! hello, or none within [`HELLO_TIMEOUT`]) are dropped unanswered and uncounted.

use super::runner::{Event, Runner};
use crate::clock;
use crate::kind::{Flow, Io, Step, READ_WRITE};
use crate::sockopt;
use fathom_proto::plan::SocketOptions;
use fathom_proto::DataHello;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

/// Connections accepted per run before yielding to the worker's other flows.
const ACCEPTS_PER_TURN: u32 = 32;
/// How long an accepted connection may take to send its hello (ns).
const HELLO_TIMEOUT: u64 = 5_000_000_000;
/// How soon a connection whose flow's previous one is still closing looks again (ns).
const RETRY_NS: u64 = 200_000;

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
                        sock,
                        shared: self.shared.clone(),
                        hello: [0; DataHello::LEN],
                        got: 0,
                        until: clock::now_ns().saturating_add(HELLO_TIMEOUT),
                        flow: None,
                        runner: None,
                        wake: None,
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
    sock: mio::net::TcpStream,
    shared: Arc<Shared>,
    hello: [u8; DataHello::LEN],
    got: usize,
    /// Monotonic ns by which the hello must be complete.
    until: u64,
    /// The flow its hello named.
    flow: Option<u32>,
    /// The flow's place, while this connection runs it.
    runner: Option<Box<Runner>>,
    wake: Option<u64>,
}

impl Served {
    /// Reads and checks the hello: the flow it names, `Ok(None)` while it is incomplete, an
    /// error for a stranger.
    fn prove(&mut self) -> io::Result<Option<u32>> {
        if let Some(f) = self.flow {
            return Ok(Some(f));
        }
        while self.got < self.hello.len() {
            match self.sock.read(&mut self.hello[self.got..]) {
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

    /// Runs the flow's mirror program on this connection.
    fn serve(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        loop {
            let Some(runner) = self.runner.as_mut() else {
                return Ok(Step::Done);
            };
            match runner.step(Some(&mut self.sock), io)? {
                Event::Connect => runner.connected(self.sock.as_raw_fd()),
                Event::Disconnect => {
                    if !runner.drain(&mut self.sock, io.rbuf)? {
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
                // A mirror follows its connection and never waits at a barrier.
                Event::Barrier(_) => runner.pass_barrier(),
                Event::PeerEnded if runner.peer_ended() => {
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
        r.register(&mut self.sock, t, READ_WRITE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.wake = None;
        let Some(flow) = self.prove()? else {
            return Ok(Step::Wait);
        };
        if self.runner.is_none() {
            match self.shared.take(flow) {
                Taken::Runner(r) => self.runner = Some(r),
                Taken::Busy => {
                    self.wake = Some(clock::now_ns().saturating_add(RETRY_NS));
                    return Ok(Step::Wait);
                }
                Taken::Gone => return Err(stranger()),
            }
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

fn stranger() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a connection without the test's hello",
    )
}
