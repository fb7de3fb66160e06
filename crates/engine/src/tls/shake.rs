//! Handshakes under one deadline each: on a non-blocking socket, advanced whenever it is ready
//! (so one thread shakes hands on many connections side by side: the agent's data connections),
//! or blocking, in flow order, on the connecting end's flows.

use super::TlsEnd;
use crate::kind::Sockets;
use fathom_proto::plan::FlowPlan;
use rustls::Connection;
use socket2::Socket;
use std::io::{self, Read, Write};
use std::time::Instant;

/// A server or client handshake in progress on a non-blocking socket.
pub struct Handshake {
    conn: Connection,
    end: TlsEnd,
    start: Instant,
}

impl TlsEnd {
    /// Begins a handshake of a new session of this end; the clock of its duration starts now.
    pub fn begin(&self) -> io::Result<Handshake> {
        Ok(Handshake {
            conn: self.session()?,
            end: self.clone(),
            start: Instant::now(),
        })
    }
}

impl Handshake {
    /// Does what the socket allows now: `Ok(true)` once the handshake is complete and sent,
    /// `Ok(false)` while it waits for the socket. A failure sends the peer its alert.
    pub fn advance<S: Read + Write>(&mut self, sock: &mut S) -> io::Result<bool> {
        loop {
            while self.conn.wants_write() {
                match self.conn.write_tls(sock) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if !self.conn.is_handshaking() {
                return Ok(true);
            }
            match self.conn.read_tls(sock) {
                Ok(0) => return Err(closed()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            if let Err(e) = self.conn.process_new_packets() {
                while self.conn.wants_write() && self.conn.write_tls(sock).is_ok() {}
                let e = io::Error::new(io::ErrorKind::InvalidData, e);
                return Err(self.end.explain(e));
            }
        }
    }

    /// The session, and how long its handshake took (ns).
    pub fn finish(self) -> (Connection, u64) {
        self.end.note(&self.conn);
        (self.conn, self.start.elapsed().as_nanos() as u64)
    }
}

/// Shakes hands on every connection, in flow order (the other end takes them as they come),
/// each blocking within its deadline; returns the sessions with the time each took.
pub fn shake_hands(end: &TlsEnd, socks: Vec<(FlowPlan, Socket)>) -> io::Result<Sockets> {
    let mut out = Vec::with_capacity(socks.len());
    for (f, sock) in socks {
        let (conn, ns) = end.handshake(&sock).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("TLS handshake on data connection {}: {e}", f.id),
            )
        })?;
        out.push((f, sock, conn, ns));
    }
    Ok(Sockets::Tls(out))
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the peer closed during the TLS handshake",
    )
}
