//! A data connection as the kinds read and write it: a non-blocking TCP socket, clear or with a
//! TLS session. In clear every call is the socket's own. With TLS, reads fill a buffer of the
//! connection's own with one system call and feed rustls from it (rustls alone reads 4 KB per
//! call), and writes encrypt into rustls's queue and send it with one writev. A reader that only
//! counts ([`Wire::read_drop`]) takes the plaintext where rustls decrypted it, without a copy.
//! A call says `WouldBlock` only when the socket did, so an edge-triggered wait on the socket is
//! enough. A clear connection may also wait for data in the kernel ([`Wire::read_waiting`]).

use rustls::{Connection, Reader};
use std::io::{self, BufRead, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};

use super::TlsEnd;
use crate::recv_wait::{Plan, RecvWait};

/// A non-blocking TCP connection, clear or TLS.
pub struct Wire {
    sock: mio::net::TcpStream,
    tls: Option<Box<Tls>>,
    /// The receive timeout of a clear socket that has waited in a read.
    wait: RecvWait,
}

struct Tls {
    conn: Connection,
    end: TlsEnd,
    /// Ciphertext read from the socket, `buf[start..filled]` not yet given to rustls.
    buf: Box<[u8]>,
    start: usize,
    filled: usize,
    /// The last socket read came back short (or would block): the socket is empty.
    empty: bool,
    /// The handshake finished and was noted.
    noted: bool,
    /// Our close_notify is queued.
    closing: bool,
}

impl Wire {
    /// A clear connection.
    pub fn clear(sock: mio::net::TcpStream) -> Wire {
        Wire {
            sock,
            tls: None,
            wait: RecvWait::default(),
        }
    }

    /// A connection carrying TLS session `conn` of `end`, reading up to `read` bytes of
    /// ciphertext per system call.
    pub fn tls(sock: mio::net::TcpStream, conn: Connection, end: TlsEnd, read: usize) -> Wire {
        let mut w = Wire::clear(sock);
        w.secure(conn, end, read);
        w
    }

    /// Carries TLS session `conn` of `end` from now on (a clear opening came first), reading up
    /// to `read` bytes of ciphertext per system call.
    pub fn secure(&mut self, conn: Connection, end: TlsEnd, read: usize) {
        let noted = !conn.is_handshaking();
        self.tls = Some(Box::new(Tls {
            conn,
            end,
            buf: vec![0; read].into_boxed_slice(),
            start: 0,
            filled: 0,
            empty: false,
            noted,
            closing: false,
        }));
    }

    /// The socket (to register it, or to ask it about its connection).
    pub fn socket(&mut self) -> &mut mio::net::TcpStream {
        &mut self.sock
    }

    /// True when TLS carries the data.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Reads application data: `Ok(0)` at the end of the stream.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.tls {
            None => self.clear_read(buf),
            Some(t) => t.read(&mut self.sock, |r| r.read(buf)),
        }
    }

    /// Reads application data like [`Wire::read`], but a clear connection waits in the kernel
    /// until some arrives, for at most a receive timeout that ends before the deadline `left`
    /// ns away: `WouldBlock` when none came in time. With TLS, or too near the deadline, it
    /// does not wait. The caller says how far the deadline is, from a clock it already read.
    pub fn read_waiting(&mut self, buf: &mut [u8], left: u64) -> io::Result<usize> {
        if self.tls.is_none() && self.wait.prepare(&self.sock, left)? {
            return recv(self.sock.as_raw_fd(), buf, 0);
        }
        self.read(buf)
    }

    /// True when [`Wire::read_waiting`] with a deadline `left` ns away would wait in the
    /// kernel (a clear connection, not too near the deadline); otherwise it is a plain read.
    pub fn can_wait(&self, left: u64) -> bool {
        self.tls.is_none() && self.wait.plan(left) != Plan::NoWait
    }

    fn clear_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.wait.blocking() {
            recv(self.sock.as_raw_fd(), buf, libc::MSG_DONTWAIT)
        } else {
            self.sock.read(buf)
        }
    }

    /// Reads up to `scratch.len()` bytes of application data and drops them: `Ok(0)` at the end
    /// of the stream. In clear they land in `scratch` (the one copy a clear receiver makes);
    /// with TLS the plaintext is dropped where rustls decrypted it, not copied once more.
    pub fn read_drop(&mut self, scratch: &mut [u8]) -> io::Result<usize> {
        match &mut self.tls {
            None => self.clear_read(scratch),
            Some(t) => t.read(&mut self.sock, |r| {
                let n = r.fill_buf()?.len().min(scratch.len());
                r.consume(n);
                Ok(n)
            }),
        }
    }

    /// Writes application data; with TLS, what is accepted is encrypted and queued, and sent as
    /// far as the socket takes it (the rest goes with the next call, or [`Wire::flush`]).
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.tls {
            None if self.wait.blocking() => send(self.sock.as_raw_fd(), buf),
            None => self.sock.write(buf),
            Some(t) => t.write(&mut self.sock, buf),
        }
    }

    /// Sends what TLS has queued; `Ok(true)` when nothing is left.
    pub fn flush(&mut self) -> io::Result<bool> {
        match &mut self.tls {
            None => Ok(true),
            Some(t) => t.flush(&mut self.sock),
        }
    }

    /// After a read of `n` bytes into a buffer of `len`: true when nothing more can be read
    /// until the socket signals again.
    pub fn drained(&self, n: usize, len: usize) -> bool {
        match &self.tls {
            None => n < len,
            Some(t) => t.empty && t.start == t.filled && t.conn.wants_read(),
        }
    }

    /// Ends this side's writing (TLS: close_notify first); `Ok(false)` while queued data still
    /// waits for room in the socket.
    pub fn close(&mut self) -> io::Result<bool> {
        if let Some(t) = &mut self.tls {
            if !t.closing {
                t.closing = true;
                t.conn.send_close_notify();
            }
            if !t.flush(&mut self.sock)? {
                return Ok(false);
            }
        }
        match self.sock.shutdown(Shutdown::Write) {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => Err(e),
            _ => Ok(true),
        }
    }
}

impl AsRawFd for Wire {
    fn as_raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

/// One `recv` with `flags`.
fn recv(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: buf is valid for writes of its length for the duration of the call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// One `send` that never blocks (on a socket that otherwise would).
fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
    // SAFETY: buf is valid for reads of its length for the duration of the call.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

fn would_block(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock
}

impl Tls {
    /// Takes plaintext with `take` (which says `WouldBlock` when rustls holds none), reading and
    /// decrypting more from the socket while there is none.
    fn read(
        &mut self,
        sock: &mut mio::net::TcpStream,
        mut take: impl FnMut(&mut Reader<'_>) -> io::Result<usize>,
    ) -> io::Result<usize> {
        loop {
            match take(&mut self.conn.reader()) {
                Err(e) if would_block(&e) => {}
                r => return r,
            }
            if self.start == self.filled {
                match sock.read(&mut self.buf) {
                    Ok(n) => {
                        self.start = 0;
                        self.filled = n;
                        self.empty = n < self.buf.len();
                        if n == 0 {
                            // The end of the stream: rustls says whether it was a clean one.
                            self.conn.read_tls(&mut io::empty())?;
                            self.process(sock)?;
                            return match take(&mut self.conn.reader()) {
                                Err(e) if would_block(&e) => Err(io::Error::new(
                                    io::ErrorKind::UnexpectedEof,
                                    "the peer closed without ending its TLS session",
                                )),
                                r => r,
                            };
                        }
                    }
                    Err(e) => {
                        self.empty = would_block(&e);
                        return Err(e);
                    }
                }
            }
            let n = self
                .conn
                .read_tls(&mut &self.buf[self.start..self.filled])?;
            self.start += n;
            self.process(sock)?;
        }
    }

    /// Decrypts what rustls holds, answers what the handshake needs, notes its end.
    fn process(&mut self, sock: &mut mio::net::TcpStream) -> io::Result<()> {
        if let Err(e) = self.conn.process_new_packets() {
            // Tell the peer why (the alert rustls queued), then fail.
            let _ = self.flush(sock);
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        if !self.noted && !self.conn.is_handshaking() {
            self.noted = true;
            self.end.note(&self.conn);
        }
        if self.conn.wants_write() {
            self.flush(sock)?;
        }
        Ok(())
    }

    fn write(&mut self, sock: &mut mio::net::TcpStream, buf: &[u8]) -> io::Result<usize> {
        if !self.flush(sock)? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = self.conn.writer().write(buf)?;
        self.flush(sock)?;
        Ok(n)
    }

    fn flush(&mut self, sock: &mut mio::net::TcpStream) -> io::Result<bool> {
        while self.conn.wants_write() {
            match self.conn.write_tls(sock) {
                Ok(_) => {}
                Err(e) if would_block(&e) => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}
