//! iperf3's control exchange driven by bytes instead of a socket, for the fuzz target
//! `fuzz/fuzz_targets/iperf3_control.rs` and its corpus replay: the bytes are what a client
//! sends on its control connection (the cookie, the framed parameters, the state bytes, its
//! framed results), and the server's side runs them as `session` does, through the
//! same wire, parameter and result code, with no data stream opened (the streams' sockets are
//! not part of the input; a test with none counts nothing). Memory never blocks, so the
//! deadlines never pass. Built with the `fuzz` feature only.

use super::session::{self, Ctx};
use super::slot::Slot;
use super::wire::{self, Control};
use fathom_proto::memory::MemoryStream;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest test the fuzzed server accepts, ns (the agent's default, an hour).
const MAX_DURATION_NS: u64 = 3_600_000_000_000;

/// Runs one control connection whose client sends `bytes` and then closes its end.
pub fn fuzz_control(bytes: &[u8]) {
    let mut ctrl = MemoryStream::new(bytes);
    let Ok(cookie) = wire::read_cookie(&mut ctrl, Instant::now() + Duration::from_secs(1)) else {
        return;
    };
    let ctx = Ctx {
        addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
        slot: Arc::new(Mutex::new(Slot::Busy)),
        max_duration_ns: MAX_DURATION_NS,
        auth: None,
        data: false,
    };
    drop(session::run(ctrl, cookie, &ctx, 0));
}

impl Control for MemoryStream {
    fn set_read_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}
