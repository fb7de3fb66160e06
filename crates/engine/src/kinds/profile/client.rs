//! The end that runs the program as written: it opens the flow's connections (each with the
//! test's hello, as crr's do) when the program connects, and closes them first when it
//! disconnects, reading to the other end's close so that neither end resets.

use super::barrier::{Barriers, BARRIER_POLL_NS};
use super::runner::{Event, Runner};
use crate::clock;
use crate::kind::{Flow, Io, Step};
use crate::kinds::crr::{dial, established};
use fathom_proto::plan::SocketOptions;
use fathom_proto::DataHello;
use mio::net::TcpStream;
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// One flow on the connecting end.
pub(super) struct Client {
    /// The accepting end's listener.
    pub server: SocketAddr,
    /// What opens every connection.
    pub hello: [u8; DataHello::LEN],
    /// Options set on every connection.
    pub opts: SocketOptions,
    /// The flow's program and counters.
    pub runner: Runner,
    /// Its connection, while one is open or opening.
    pub link: Option<Link>,
    /// When the flow next wants to run regardless of readiness.
    pub wake: Option<u64>,
    /// The barriers every flow of this end shares.
    pub barriers: Arc<Barriers>,
    /// The barrier this flow waits at, once it arrived there.
    pub waiting: Option<usize>,
}

/// A connection of a flow.
pub(super) struct Link {
    sock: TcpStream,
    /// Established (connect() finished).
    up: bool,
    /// Bytes of the hello sent.
    hello_sent: usize,
    /// This end's writing is shut down (closing).
    shut: bool,
}

impl Client {
    /// Opens the connection: `Ok(false)` while it is under way.
    fn open(&mut self, io: &mut Io<'_>) -> io::Result<bool> {
        let link = match &mut self.link {
            Some(l) => l,
            None => self.link.insert(Link {
                sock: dial(self.server, &self.opts, io)?,
                up: false,
                hello_sent: 0,
                shut: false,
            }),
        };
        if !link.up {
            if !established(&link.sock)? {
                return Ok(false);
            }
            link.up = true;
        }
        while link.hello_sent < self.hello.len() {
            match link.sock.write(&self.hello[link.hello_sent..]) {
                Ok(k) => link.hello_sent += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.runner.connected(link.sock.as_raw_fd());
        Ok(true)
    }

    /// Closes the connection, this end first: `Ok(false)` until the other end closed too.
    fn close(&mut self, io: &mut Io<'_>) -> io::Result<bool> {
        if let Some(link) = &mut self.link {
            if !link.shut {
                link.sock.shutdown(Shutdown::Write)?;
                link.shut = true;
            }
            if !self.runner.drain(&mut link.sock, io.rbuf)? {
                return Ok(false);
            }
            io.registry.deregister(&mut link.sock)?;
            self.link = None;
        }
        self.runner.disconnected(io.latency);
        Ok(true)
    }
}

impl Flow for Client {
    fn register(&mut self, _: &mio::Registry, _: mio::Token) -> io::Result<()> {
        Ok(())
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.wake = None;
        let step = self.turn(io);
        if step.is_err() {
            self.barriers.break_all();
        }
        step
    }

    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.barriers.break_all();
        if let Some(mut link) = self.link.take() {
            let _ = io.registry.deregister(&mut link.sock);
        }
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        self.wake
    }
}

impl Client {
    /// Runs the program until it blocks, yields or ends.
    fn turn(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        loop {
            let sock = self
                .link
                .as_mut()
                .filter(|l| l.up && !l.shut)
                .map(|l| &mut l.sock);
            match self.runner.step(sock, io)? {
                Event::Connect => {
                    if !self.open(io)? {
                        return Ok(Step::Wait);
                    }
                }
                Event::Disconnect => {
                    if !self.close(io)? {
                        return Ok(Step::Wait);
                    }
                }
                Event::Wait(at) => {
                    self.wake = at;
                    return Ok(Step::Wait);
                }
                Event::Yield => return Ok(Step::Again),
                Event::End => return Ok(Step::Done),
                Event::Barrier(tx) => {
                    if self.waiting != Some(tx) {
                        self.waiting = Some(tx);
                        self.barriers.arrive(tx);
                    }
                    if !self.barriers.all_here(tx)? {
                        self.wake = Some(clock::now_ns().saturating_add(BARRIER_POLL_NS));
                        return Ok(Step::Wait);
                    }
                    self.runner.pass_barrier();
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
