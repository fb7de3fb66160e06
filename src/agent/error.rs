//! What ends an agent's session or refuses its test: [`AgentError`]. Its message is what the
//! controller is sent (`ToController::Error`) and what `fathom serve` logs; each names
//! the flag, the limit or the connection at fault.

use fathom_engine::tls::TlsError;
use fathom_proto::validate::PlanError;
use fathom_proto::FrameError;
use std::io;

/// Why a session ended in error or its test was refused.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A socket operation on the control connection (or the engine's lookup of the kind).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The control connection's frames.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The handshake refused the controller; the reason was sent to it.
    #[error("refused: {0}")]
    Refused(Refusal),
    /// A write to the controller timed out: it stopped reading.
    #[error("the controller read nothing for {0} s (silent); test stopped")]
    Deaf(u64),
    /// A write to the controller failed.
    #[error("controller unreachable: {0}")]
    Unreachable(FrameError),
    /// The controller sent nothing within the silence limit.
    #[error("the controller was silent for {0} s; test stopped")]
    Silent(u64),
    /// The test ran past `--max-duration`.
    #[error("the test exceeded this agent's --max-duration and was stopped")]
    Overran,
    /// This host's settings report is larger than the protocol carries.
    #[error("this host's settings report is {0} bytes, more than the protocol carries")]
    SettingsTooLarge(usize),
    /// A message the session does not take.
    #[error("unexpected {0} message")]
    Unexpected(&'static str),
    /// The plan does not fit this agent: its bounds or the agent's limits.
    #[error(transparent)]
    Admit(#[from] Refused),
    /// The test's data connections: their arrival, their hello, their TLS handshakes.
    #[error(transparent)]
    Arrival(#[from] ArrivalError),
    /// A second Setup.
    #[error("a session runs one test; Setup came twice")]
    SetupTwice,
    /// A Join after a Setup.
    #[error("a session runs one test; Join came after another setup")]
    JoinAfterSetup,
    /// Data connections before Setup.
    #[error("data before Setup")]
    NoPlan,
    /// A data connection whose flow the test does not have.
    #[error("a data connection of no flow")]
    NoSuchFlow,
    /// A file copy on an agent without `--files-root`.
    #[error("this agent serves no files: start it with `fathom serve --files-root DIR`")]
    NoFilesRoot,
    /// The data listener (or the UDP sockets) could not be opened.
    #[error("cannot open a data listener: {0}")]
    Listener(io::Error),
    /// A client end's connections to the server agent.
    #[error(transparent)]
    Connect(#[from] crate::connect::ConnectError),
    /// The engine could not set up the flows.
    #[error("cannot set up the flows: {0}")]
    Flows(io::Error),
    /// Start before every data connection arrived.
    #[error("Start before all data connections arrived")]
    StartEarly,
    /// A start instant too far away.
    #[error("the start instant is {lead_s} s away; this agent accepts at most {most_s} s")]
    StartLead {
        /// How far away it is, s.
        lead_s: u64,
        /// The most this agent accepts, s.
        most_s: u64,
    },
    /// The engine could not start the test.
    #[error("cannot start the test: {0}")]
    Start(io::Error),
}

/// Why the handshake refused a controller (sent to it as the Error's message).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// Its preamble or protocol version.
    #[error(transparent)]
    Preamble(FrameError),
    /// A data connection's preamble on the control port.
    #[error("data connections go to the port named in Ready")]
    DataOnControl,
    /// The key did not check out: "wrong key" or that one is required.
    #[error("authentication failed: {0}")]
    Auth(&'static str),
    /// Another message where Auth was due.
    #[error("expected Auth, got {0}")]
    NotAuth(&'static str),
    /// Auth did not arrive or did not decode.
    #[error(transparent)]
    NoAuth(FrameError),
    /// `--max-tests` are running.
    #[error("this agent is running its maximum number of tests (--max-tests)")]
    Full,
}

/// A plan this agent does not run: out of bounds, over one of its limits, or without the TLS
/// certificate it needs.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The plan's own bounds.
    #[error("the plan is out of bounds: {0}")]
    Bounds(PlanError),
    /// A CPU this agent may not use.
    #[error("CPU {cpu} (--affinity or --cpus) is not one this agent may use ({usable})")]
    Cpu {
        /// The CPU asked for.
        cpu: u32,
        /// The CPUs it may use.
        usable: String,
    },
    /// Spinning workers (`--busy-poll`) that would share one of this agent's CPUs.
    #[error("{0}")]
    Spinning(String),
    /// More connections than `--max-flows`.
    #[error("the test asks for {asks} connections; this agent allows {allows} (--max-flows)")]
    Flows {
        /// Connections the plan asks for.
        asks: usize,
        /// `--max-flows`.
        allows: u32,
    },
    /// Longer than `--max-duration`.
    #[error("the test would run {secs} s; this agent allows {allows} s (--max-duration)")]
    Duration {
        /// Warm-up and window, s.
        secs: u64,
        /// `--max-duration`, s.
        allows: u64,
    },
    /// More memory than one test may use.
    #[error(
        "the test would need about {need_mb} MB on this agent (threads x (write + read) plus \
         per-flow state: a UDP sender's size x batch); one test may use {per_test_mb} MB \
         (--max-memory {max_mb} MB)"
    )]
    Memory {
        /// What the test needs, MB.
        need_mb: u64,
        /// What one test may use, MB.
        per_test_mb: u64,
        /// `--max-memory`, MB.
        max_mb: u64,
    },
    /// More memory than the running tests leave.
    #[error(
        "the test would need about {need_mb} MB; the tests running on this agent hold {held_mb} \
         of its {max_mb} MB (--max-memory); try again later"
    )]
    Busy {
        /// What the test needs, MB.
        need_mb: u64,
        /// What the running tests hold, MB.
        held_mb: u64,
        /// `--max-memory`, MB.
        max_mb: u64,
    },
    /// The agent's TLS certificate or this end's TLS configuration.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The certificate was made but cannot be read back.
    #[error("no TLS certificate")]
    NoCertificate,
}

/// Why a test's data connections did not all arrive.
#[derive(Debug, thiserror::Error)]
pub enum ArrivalError {
    /// The listener could not be polled.
    #[error("cannot wait for data connections: {0}")]
    Wait(io::Error),
    /// Not all flows arrived in time.
    #[error("only {got} of {flows} data connections arrived within {secs} s")]
    Late {
        /// Flows that arrived.
        got: usize,
        /// Flows expected.
        flows: usize,
        /// The arrival's time limit, s.
        secs: u64,
    },
    /// Out of file descriptors with no stranger to cut off (the message says what to raise).
    #[error(transparent)]
    Descriptors(io::Error),
    /// A data connection's TLS handshake failed or ran out of time.
    #[error("TLS handshake on data connection {flow}: {source}")]
    Handshake {
        /// Its flow.
        flow: u32,
        /// Why.
        source: io::Error,
    },
    /// A data connection's socket could not be made blocking.
    #[error("data connection {flow}: {source}")]
    Socket {
        /// Its flow.
        flow: u32,
        /// Why.
        source: io::Error,
    },
}
