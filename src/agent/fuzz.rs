//! The agent's control path driven by bytes instead of a socket, for the fuzz targets in `fuzz/`
//! and their corpus replay in `tests/fuzz_smoke.rs`: a whole session (preamble, authentication,
//! frames, plan admission, the session's state machine) reads its control connection from
//! memory. Data listeners and sockets stay real; [`isolate_network`] keeps them, and any Join a
//! fuzzed frame names, inside a private network namespace with only loopback. The `file` target's
//! entry point, [`fuzz_file`], runs a copy's receiving end fed from bytes.

mod file;

pub use file::{file_seeds, fuzz_file, put_plan};

use super::handshake::Handshakes;
use super::stream::ControlStream;
use super::{session, AgentConfig};
use fathom_engine::Side;
use fathom_proto::plan::TestPlan;
use fathom_proto::{Connection, MAX_FRAME};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Runs one agent session whose controller sends `bytes` and then closes its end, as the
/// agent's only connection.
pub fn fuzz_session(bytes: &[u8], cfg: &AgentConfig) {
    let peer = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 1);
    let stream = MemoryStream::new(bytes);
    let handshakes = Arc::new(Handshakes::default());
    let pass = Handshakes::enter(&handshakes, 0, &stream).expect("a memory stream clones");
    session::run(stream, peer, cfg, 0, pass, &Arc::default());
}

/// Decodes `bytes` as the body of a frame holding a plan, as a peer would send it, and puts the
/// plan through the agent's admission for both of its ends (validation, the memory estimate and
/// budget, the agent's limits).
pub fn fuzz_plan(bytes: &[u8], cfg: &AgentConfig) {
    let Ok(len) = u32::try_from(bytes.len()) else {
        return;
    };
    let framed = [&len.to_be_bytes()[..], bytes].concat();
    let mut conn = Connection::new(MemoryStream::new(&framed));
    let Ok(Some(plan)) = conn.recv::<TestPlan>(MAX_FRAME) else {
        return;
    };
    for side in [Side::Client, Side::Server] {
        drop(cfg.admit(&plan, side, plan.flows.len()));
    }
}

/// Moves the calling thread, and every thread it starts from then on, into a new network
/// namespace in which only loopback is up: nothing a fuzzed plan asks for leaves the machine or
/// reaches another process's ports. Needs root (CAP_SYS_ADMIN) and `ip` (iproute2).
pub fn isolate_network() -> io::Result<()> {
    // SAFETY: unshare takes flags only and changes no memory of this process.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let status = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "ip link set lo up in the new namespace: {status}"
        )));
    }
    Ok(())
}

/// A control connection whose peer sent a fixed sequence of bytes and then closed; what the
/// session writes is dropped. Clones share the read position, as clones of a socket do.
#[derive(Clone)]
pub struct MemoryStream {
    shared: Arc<Mutex<Shared>>,
}

struct Shared {
    input: Vec<u8>,
    read: usize,
    shut: bool,
}

impl MemoryStream {
    /// A stream that yields `input`, then end of stream.
    pub fn new(input: &[u8]) -> Self {
        MemoryStream {
            shared: Arc::new(Mutex::new(Shared {
                input: input.to_vec(),
                read: 0,
                shut: false,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Read for MemoryStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.lock();
        if s.shut {
            return Ok(0);
        }
        let rest = &s.input[s.read..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        s.read += n;
        Ok(n)
    }
}

impl Write for MemoryStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.lock().shut {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ControlStream for MemoryStream {
    fn try_clone(&self) -> io::Result<Self> {
        Ok(self.clone())
    }

    fn set_nodelay(&self, _: bool) -> io::Result<()> {
        Ok(())
    }

    fn set_read_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    fn set_write_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    fn shutdown(&self, _: Shutdown) -> io::Result<()> {
        self.lock().shut = true;
        Ok(())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 5301))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_read_position_and_shutdown_ends_both() {
        let mut a = MemoryStream::new(b"abcdef");
        let mut b = a.try_clone().unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(a.read(&mut buf).unwrap(), 4);
        assert_eq!(b.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"ef");
        assert_eq!(b.read(&mut buf).unwrap(), 0);
        let mut c = MemoryStream::new(b"xyz");
        c.try_clone().unwrap().shutdown(Shutdown::Both).unwrap();
        assert_eq!(c.read(&mut buf).unwrap(), 0);
        assert!(c.write(b"x").is_err());
    }
}
