//! The end that runs the program as written: it opens the flow's connections (each with the
//! test's hello, as crr's do; then a UDP flow's port exchange or a TLS group's handshake)
//! when the program connects, and closes them first when it disconnects, reading to the other
//! end's close so that neither end resets.

use super::barrier::{Meet, Waiter};
use super::carrier::{self, Carrier, UDP_PORT_LEN};
use super::runner::{Event, Runner};
use super::serve::{OPENING, PLACE_LEN};
use super::TLS_READ;
use crate::kind::{Flow, Io, Step};
use crate::kinds::crr::{dial, established};
use crate::tls::{Handshake, TlsEnd, Wire};
use fathom_proto::plan::SocketOptions;
use fathom_proto::DataHello;
use mio::net::UdpSocket;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

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
    /// Its data operations move datagrams (a UDP group).
    pub datagrams: bool,
    /// A TLS group: this end's configuration, for a session per connection.
    pub tls: Option<TlsEnd>,
    /// Its connection, while one is open or opening.
    pub link: Option<Link>,
    /// When the flow next wants to run regardless of readiness.
    pub wake: Option<u64>,
    /// Its way through the barriers every flow shares.
    pub barrier: Waiter,
}

/// A connection of a flow.
pub(super) struct Link {
    wire: Wire,
    stage: Stage,
    /// What opens it: the hello, the transaction, and a UDP flow's port.
    opening: [u8; OPENING],
    /// Bytes of `opening` to send, and sent so far.
    len: usize,
    sent: usize,
    /// A UDP flow's socket, and the agent's port as read so far.
    udp: Option<UdpSocket>,
    port: [u8; UDP_PORT_LEN],
    got: usize,
    /// This end's writing is shut down (closing).
    shut: bool,
}

/// How far a connection is from carrying the program.
enum Stage {
    /// connect() under way.
    Dialing,
    /// Sending the opening.
    Opening,
    /// A UDP flow: reading the agent's port.
    Pairing,
    /// A TLS group: the handshake.
    Shaking(Box<Handshake>),
    /// Carrying the program.
    Open,
}

impl Link {
    /// The carrier of an open link, none while it opens or closes.
    fn carrier(&mut self) -> Option<Carrier<'_>> {
        if !matches!(self.stage, Stage::Open) || self.shut {
            return None;
        }
        Some(match &self.udp {
            Some(u) => Carrier::Datagram(u),
            None => Carrier::Stream(&mut self.wire),
        })
    }

    /// Sends what is left of the opening: `Ok(false)` while the socket is full.
    fn send_opening(&mut self) -> io::Result<bool> {
        while self.sent < self.len {
            match self.wire.socket().write(&self.opening[self.sent..self.len]) {
                Ok(k) => self.sent += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Reads the agent's UDP port and connects the flow's UDP socket to it: `Ok(false)` while
    /// it has not come.
    fn pair(&mut self) -> io::Result<bool> {
        while self.got < UDP_PORT_LEN {
            match self.wire.socket().read(&mut self.port[self.got..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the agent closed the connection instead of naming its UDP port",
                    ))
                }
                Ok(k) => self.got += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let to = carrier::peer_of(self.wire.socket().peer_addr()?, self.port)?;
        if let Some(u) = &self.udp {
            u.connect(to)?;
        }
        Ok(true)
    }
}

impl Link {
    /// Takes `stage` one step further: the next stage, and whether it moved (else the socket
    /// is not ready and `stage` comes back).
    fn advance(
        &mut self,
        stage: Stage,
        datagrams: bool,
        tls: Option<&TlsEnd>,
        opts: &SocketOptions,
        io: &Io<'_>,
    ) -> io::Result<(Stage, bool)> {
        Ok(match stage {
            Stage::Dialing if !established(self.wire.socket())? => (stage, false),
            Stage::Dialing => {
                if datagrams {
                    let local = self.wire.socket().local_addr()?;
                    let udp = carrier::open_udp(local, opts, io)?;
                    let at = DataHello::LEN + PLACE_LEN;
                    self.opening[at..].copy_from_slice(&carrier::port_bytes(&udp)?);
                    self.len = OPENING;
                    self.udp = Some(udp);
                }
                (Stage::Opening, true)
            }
            Stage::Opening if !self.send_opening()? => (stage, false),
            Stage::Opening if datagrams => (Stage::Pairing, true),
            Stage::Opening => match tls {
                Some(end) => (Stage::Shaking(Box::new(end.begin()?)), true),
                None => (Stage::Open, true),
            },
            Stage::Pairing if !self.pair()? => (stage, false),
            Stage::Pairing => (Stage::Open, true),
            Stage::Shaking(mut h) => {
                if !h.advance(self.wire.socket())? {
                    return Ok((Stage::Shaking(h), false));
                }
                let (conn, _) = h.finish();
                let end = tls.cloned().ok_or_else(|| io::Error::other("no TLS end"))?;
                self.wire.secure(conn, end, TLS_READ);
                (Stage::Open, true)
            }
            Stage::Open => (Stage::Open, true),
        })
    }
}

impl Client {
    /// Starts a connection: dialed, and (a UDP flow) its UDP socket opened.
    fn dial(&self, io: &Io<'_>) -> io::Result<Link> {
        let mut opening = [0; OPENING];
        opening[..DataHello::LEN].copy_from_slice(&self.hello);
        let place = u32::try_from(self.runner.transaction()).unwrap_or(u32::MAX);
        opening[DataHello::LEN..DataHello::LEN + PLACE_LEN].copy_from_slice(&place.to_be_bytes());
        Ok(Link {
            wire: Wire::clear(dial(self.server, &self.opts, io)?),
            stage: Stage::Dialing,
            opening,
            len: DataHello::LEN + PLACE_LEN,
            sent: 0,
            udp: None,
            port: [0; UDP_PORT_LEN],
            got: 0,
            shut: false,
        })
    }

    /// Opens the connection: `Ok(false)` while it is under way.
    fn open(&mut self, io: &mut Io<'_>) -> io::Result<bool> {
        if self.link.is_none() {
            self.link = Some(self.dial(io)?);
        }
        let link = self.link.as_mut().expect("a link being opened");
        while !matches!(link.stage, Stage::Open) {
            let stage = std::mem::replace(&mut link.stage, Stage::Open);
            let (next, moved) =
                link.advance(stage, self.datagrams, self.tls.as_ref(), &self.opts, io)?;
            link.stage = next;
            if !moved {
                return Ok(false);
            }
        }
        let data = link
            .udp
            .as_ref()
            .map_or(link.wire.as_raw_fd(), |u| u.as_raw_fd());
        self.runner
            .connected(link.wire.as_raw_fd(), data, io.latency);
        Ok(true)
    }

    /// Closes the connection, this end first: `Ok(false)` until the other end closed too.
    fn close(&mut self, io: &mut Io<'_>) -> io::Result<bool> {
        if let Some(link) = &mut self.link {
            if !link.shut {
                if !link.wire.close()? {
                    return Ok(false);
                }
                link.shut = true;
            }
            if !self.runner.drain(&mut link.wire, io.rbuf)? {
                return Ok(false);
            }
            io.registry.deregister(link.wire.socket())?;
            if let Some(u) = &mut link.udp {
                io.registry.deregister(u)?;
            }
        }
        // The sampler forgets the socket before it closes.
        self.runner.disconnected(io.latency);
        self.link = None;
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
            self.barrier.break_all();
        }
        step
    }

    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.barrier.break_all();
        self.drop_link(io);
        Ok(Step::Done)
    }

    fn timer(&self) -> Option<u64> {
        self.wake
    }
}

impl Client {
    /// Drops the connection as it is (a failure, or the end of the test).
    fn drop_link(&mut self, io: &mut Io<'_>) {
        if let Some(mut link) = self.link.take() {
            self.runner.let_go();
            let _ = io.registry.deregister(link.wire.socket());
            if let Some(u) = &mut link.udp {
                let _ = io.registry.deregister(u);
            }
        }
    }

    /// Runs the program until it blocks, yields or ends.
    fn turn(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        loop {
            let sock = self.link.as_mut().and_then(Link::carrier);
            match self.runner.step(sock, io)? {
                Event::Connect => match self.open(io) {
                    Ok(true) => {}
                    Ok(false) => return Ok(Step::Wait),
                    Err(_) if self.runner.can_fail() => {
                        self.drop_link(io);
                        self.runner.connect_failed(io.latency);
                    }
                    Err(e) => return Err(e),
                },
                Event::Broken => self.drop_link(io),
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
                    let wire = self.link.as_mut().map(|l| &mut l.wire);
                    match self.barrier.meet(tx, wire)? {
                        Meet::Passed => self.runner.pass_barrier(),
                        Meet::Wait(at) => {
                            self.wake = at;
                            return Ok(Step::Wait);
                        }
                    }
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
