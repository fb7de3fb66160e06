//! What carries a profile flow's data, as the [`super::runner::Runner`] moves it: a TCP
//! connection, clear or TLS (a [`Wire`]), or, in a UDP group, a connected UDP socket.
//!
//! A UDP flow still opens with a TCP connection and the test's hello, which proves the flow
//! belongs to the test (the agent answers nothing before it); right after the hello the
//! connecting end names its UDP port ([`UDP_PORT_LEN`] bytes), and the agent answers with the
//! port of a UDP socket it opened for that flow, connected to the one named (so the kernel
//! drops any datagram from elsewhere). That TCP connection carries no data; its close is how
//! the agent learns that the flow disconnected or that a timed transaction ended.
//!
//! A datagram operation moves one datagram. The end running the program as written waits
//! [`RECV_TIMEOUT_NS`] at most for a datagram (as uperf does): one that does not come in time
//! is counted lost (the operation's `failed`) and the program goes on; the mirror waits as
//! long as its connection is open, so a lost request only costs the reply.

use crate::tls::Wire;
use mio::net::UdpSocket;
use std::io;
use std::net::SocketAddr;

/// How long the end running the program waits for a datagram before it counts it lost (ns),
/// as the UDP kinds' hello waits for its echo.
pub(super) const RECV_TIMEOUT_NS: u64 = 250_000_000;

/// Bytes of a UDP port sent on a UDP flow's TCP connection (big-endian).
pub(super) const UDP_PORT_LEN: usize = 2;

/// A flow's open data carrier, lent to the runner for one step.
pub(super) enum Carrier<'a> {
    /// The TCP connection itself (clear or TLS).
    Stream(&'a mut Wire),
    /// The UDP socket beside it (its TCP connection only opens and closes the flow).
    Datagram(&'a UdpSocket),
}

/// One datagram operation's outcome.
pub(super) enum Datagram {
    /// Done, with this many payload bytes.
    Moved(usize),
    /// The socket is not ready.
    Blocked,
}

/// Sends one datagram of `n` bytes from `wbuf` (at most its length).
pub(super) fn send(sock: &UdpSocket, wbuf: &[u8], n: u64) -> io::Result<Datagram> {
    let n = (n.min(wbuf.len() as u64)) as usize;
    loop {
        match sock.send(&wbuf[..n]) {
            Ok(k) => return Ok(Datagram::Moved(k)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Datagram::Blocked),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Receives one datagram into `rbuf`.
pub(super) fn recv(sock: &UdpSocket, rbuf: &mut [u8]) -> io::Result<Datagram> {
    loop {
        match sock.recv(rbuf) {
            Ok(k) => return Ok(Datagram::Moved(k)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Datagram::Blocked),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A non-blocking UDP socket bound to `local`'s address (any port), registered under the
/// running flow's token; `connect` it once the other end's port is known.
pub(super) fn open_udp(
    local: SocketAddr,
    opts: &fathom_proto::plan::SocketOptions,
    io: &crate::kind::Io<'_>,
) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let sock = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    crate::sockopt::apply_buffers(&sock, opts)?;
    sock.set_nonblocking(true)?;
    sock.bind(&SocketAddr::new(local.ip(), 0).into())?;
    let mut sock = UdpSocket::from_std(sock.into());
    io.registry
        .register(&mut sock, io.token, crate::kind::READ_WRITE)?;
    Ok(sock)
}

/// The port `sock` is bound to, as sent on the TCP connection.
pub(super) fn port_bytes(sock: &UdpSocket) -> io::Result<[u8; UDP_PORT_LEN]> {
    Ok(sock.local_addr()?.port().to_be_bytes())
}

/// The UDP address of the other end: its TCP address's IP with the port it sent.
pub(super) fn peer_of(tcp_peer: SocketAddr, port: [u8; UDP_PORT_LEN]) -> io::Result<SocketAddr> {
    match u16::from_be_bytes(port) {
        0 => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the other end named UDP port 0",
        )),
        p => Ok(SocketAddr::new(tcp_peer.ip(), p)),
    }
}

/// The open connection a stream operation needs.
pub(super) fn stream<'a>(sock: Option<&'a mut Carrier<'_>>) -> io::Result<&'a mut Wire> {
    match sock {
        Some(Carrier::Stream(w)) => Ok(w),
        _ => Err(not_open()),
    }
}

/// The open UDP socket a datagram operation needs.
pub(super) fn datagram<'a>(sock: Option<&'a Carrier<'_>>) -> io::Result<&'a UdpSocket> {
    match sock {
        Some(Carrier::Datagram(u)) => Ok(u),
        _ => Err(not_open()),
    }
}

fn not_open() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "no connection open")
}
