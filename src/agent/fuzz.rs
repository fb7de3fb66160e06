//! The agent's control path driven by bytes instead of a socket, for the fuzz targets in `fuzz/`
//! and their corpus replay in `tests/fuzz_smoke.rs`: a whole session (preamble, authentication,
//! frames, plan admission, the session's state machine) reads its control connection from
//! memory (proto's [`MemoryStream`], served as a [`ControlStream`]). Data listeners and sockets
//! stay real; [`isolate_network`] keeps them, and any Join a fuzzed frame names, inside a
//! private network namespace with only loopback. The `file` target's entry point,
//! [`fuzz_file`], runs a copy's receiving end fed from bytes. Built with the `fuzz` feature
//! only.

mod file;

pub use file::{file_seeds, fuzz_file, put_plan};

use super::config::AgentConfig;
use super::handshake::Handshakes;
use super::session;
use super::stream::ControlStream;
use fathom_engine::Side;
use fathom_proto::memory::MemoryStream;
use fathom_proto::plan::TestPlan;
use fathom_proto::{Connection, MAX_FRAME};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr};
use std::process::Command;
use std::sync::Arc;
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
        self.shut();
        Ok(())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 5301))
    }
}
