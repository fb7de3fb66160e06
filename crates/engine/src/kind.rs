//! The test-kind trait, the flow state machine every kind implements, and the registry.
//!
//! A kind turns connected data sockets into flows. A flow is a small state machine over one
//! socket, driven by a worker's event loop: it does as much work as it can without blocking and
//! says whether to wait for readiness, run again soon, or stop. Flows only count; the sampler
//! reads their counters.

use crate::measure::counters::FlowStats;
use fathom_proto::plan::{FlowPlan, KindId, TestPlan};
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

/// Which end of a test an endpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The controller's end: it connects the data sockets.
    Controller,
    /// The agent's end: it accepts them.
    Agent,
}

impl Side {
    /// True when this side sends the payload of flows going `dir` (or asks, for request/response).
    pub fn leads(self, dir: fathom_proto::plan::Direction) -> bool {
        use fathom_proto::plan::Direction::*;
        matches!((self, dir), (Side::Controller, Forward) | (Side::Agent, Reverse))
    }
}

/// What a flow wants after a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Blocked: run again when the socket is ready or the flow's timer fires.
    Wait,
    /// More work is possible now; run again after the other flows had a turn.
    Again,
    /// Finished.
    Done,
}

/// Per-worker resources lent to a flow while it runs.
pub struct Io<'a> {
    /// Payload to write, allocated once per worker.
    pub wbuf: &'a [u8],
    /// Scratch space to read into, allocated once per worker.
    pub rbuf: &'a mut [u8],
    /// An in-memory file holding `wbuf`'s bytes, for sendfile.
    pub zc_file: Option<RawFd>,
    /// Monotonic ns at which senders stop (u64::MAX: no time limit).
    pub end_ns: u64,
}

/// One flow's state machine.
pub trait Flow: Send {
    /// The socket to register with the event loop.
    fn source(&mut self) -> &mut dyn mio::event::Source;
    /// Readiness the flow waits for.
    fn interest(&self) -> mio::Interest;
    /// Does as much work as possible without blocking.
    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step>;
    /// The time limit passed: senders finish, receivers keep draining.
    fn stop(&mut self) -> io::Result<Step>;
    /// When the flow next wants to run regardless of readiness (monotonic ns).
    fn timer(&self) -> Option<u64> {
        None
    }
}

/// What a kind needs to build one flow.
pub struct FlowSetup {
    /// The whole test.
    pub plan: Arc<TestPlan>,
    /// This flow.
    pub flow: FlowPlan,
    /// Which end we are.
    pub side: Side,
    /// The connected data socket, non-blocking.
    pub socket: mio::net::TcpStream,
    /// The flow's counters.
    pub stats: Arc<FlowStats>,
    /// Index of this flow among the test's flows going the same way.
    pub index_in_dir: u64,
    /// Number of flows going the same way.
    pub flows_in_dir: u64,
}

/// A test kind.
pub trait Kind: Sync {
    /// Its id.
    fn id(&self) -> KindId;
    /// Builds one flow.
    fn flow(&self, setup: FlowSetup) -> io::Result<Box<dyn Flow>>;
}

/// The kind registered for `id`.
pub fn kind(id: KindId) -> Option<&'static dyn Kind> {
    crate::kinds::REGISTRY.iter().copied().find(|k| k.id() == id)
}

/// Writes from an in-memory file with sendfile; `count` bytes from its start.
pub fn sendfile(sock: RawFd, file: RawFd, count: usize) -> io::Result<usize> {
    let mut off: libc::off_t = 0;
    // SAFETY: both descriptors are owned by the caller; `off` is a valid pointer.
    let n = unsafe { libc::sendfile(sock, file, &mut off, count) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
