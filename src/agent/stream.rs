//! What a session needs from its control connection. The agent serves a `TcpStream`; the fuzz
//! harness (`fuzz`, with the `fuzz` feature) serves an in-memory stream through the same session
//! code.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

/// A control connection: a byte stream that can be cloned (one reader thread, one writer),
/// timed out, shut down and asked for its local address (data listeners bind to the same IP).
/// The methods mean what `TcpStream`'s methods of the same names mean.
pub trait ControlStream: Read + Write + Send + Sized + 'static {
    /// A second handle to the same connection.
    fn try_clone(&self) -> io::Result<Self>;
    /// Turns Nagle off (control messages are small and answered at once).
    fn set_nodelay(&self, nodelay: bool) -> io::Result<()>;
    /// Bounds each read; `None` waits forever.
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// Bounds each write; `None` waits forever.
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// Ends the connection for every handle.
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
    /// The agent's address on this connection.
    fn local_addr(&self) -> io::Result<SocketAddr>;
}

impl ControlStream for TcpStream {
    fn try_clone(&self) -> io::Result<Self> {
        TcpStream::try_clone(self)
    }

    fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        TcpStream::set_nodelay(self, nodelay)
    }

    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }

    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_write_timeout(self, timeout)
    }

    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        TcpStream::shutdown(self, how)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        TcpStream::local_addr(self)
    }
}
