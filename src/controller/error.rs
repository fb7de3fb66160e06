//! Why the controller could not run a test: [`ControlError`], each naming the agent it concerns,
//! and [`TargetError`], an agent's address that does not resolve.

use crate::connect::ConnectError;
use std::io;
use std::net::SocketAddr;

/// Why a test could not run or was cut short before anything was measured.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The agent's control port could not be reached.
    #[error("cannot reach the agent at {agent}: {source}{}", refused_hint(.source))]
    Unreachable {
        /// The agent, as the user named it.
        agent: String,
        /// Why the connection failed.
        source: io::Error,
    },
    /// A lab host's agent could not be reached from inside its namespace.
    #[error("cannot reach the agent of lab host {agent} ({addr}): {source}")]
    UnreachableInLab {
        /// The lab host.
        agent: String,
        /// Its agent's address.
        addr: SocketAddr,
        /// Why the connection failed.
        source: io::Error,
    },
    /// The agent refused, failed, or broke the protocol.
    #[error("agent at {agent}: {problem}")]
    Agent {
        /// The agent, as the user named it.
        agent: String,
        /// What went wrong.
        problem: Problem,
    },
    /// The agent sent nothing usable while the controller waited for one step's answer.
    #[error("agent at {agent} (waiting for {expecting}): {reason}")]
    Waiting {
        /// The agent, as the user named it.
        agent: String,
        /// The answer waited for.
        expecting: &'static str,
        /// Why the wait ended, in words.
        reason: String,
    },
    /// The setup took so long that the test would start after its latest start (a mesh
    /// test's slot); nothing was started.
    #[error("the setup ran {ms} ms past the test's latest start (its slot); not started")]
    Late {
        /// How far past, ms.
        ms: u64,
    },
    /// The server agent's flows are not the plan's.
    #[error("agent at {0}: its flows do not match the plan's")]
    FlowsMismatch(String),
    /// This process may not open the descriptors the test needs.
    #[error("{0}")]
    FdLimit(String),
    /// The controller's own data connections failed.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The controller's own end could not set up its flows.
    #[error("cannot set up the flows: {0}")]
    Setup(io::Error),
    /// The controller's own end could not start.
    #[error("cannot start the test: {0}")]
    Start(io::Error),
}

/// What went wrong with one agent.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The control socket failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A message did not cross, or the versions differ.
    #[error("{0}")]
    Wire(#[from] fathom_proto::FrameError),
    /// A read that ended, in words (see [`super::control::describe`]).
    #[error("{0}")]
    Read(String),
    /// The agent's own error message.
    #[error("{0}")]
    Said(String),
    /// The agent refused the connection in its handshake.
    #[error("refused: {0}")]
    Refused(String),
    /// The agent wants a key and none was given.
    #[error("this agent requires a key: pass --key-file with the agent's key")]
    NeedsKey,
    /// The agent answered out of turn.
    #[error("protocol error: expected {want}, got {got}")]
    Unexpected {
        /// The message expected.
        want: &'static str,
        /// The message that came.
        got: &'static str,
    },
}

fn refused_hint(e: &io::Error) -> &'static str {
    if e.kind() == io::ErrorKind::ConnectionRefused {
        " (is `fathom serve` running there?)"
    } else {
        ""
    }
}

/// Why an agent's address (`HOST[:PORT]`, or a lab host) gives no target.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The port is not a port number.
    #[error("'{spec}': '{port}' is not a port number")]
    Port {
        /// The address as given.
        spec: String,
        /// The port as given.
        port: String,
    },
    /// `[V6` without its `]`.
    #[error("'{0}': missing ']'")]
    Bracket(String),
    /// Not `HOST[:PORT]`.
    #[error("'{0}' is not HOST[:PORT]")]
    NotHostPort(String),
    /// An empty address.
    #[error("the host is empty")]
    Empty,
    /// The host name does not resolve.
    #[error("cannot resolve host '{host}': {source}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// The host has no address of the family asked for.
    #[error("host '{host}' has no {family} address")]
    NoAddress {
        /// The host name.
        host: String,
        /// `IPv4` or `IPv6`.
        family: &'static str,
    },
    /// The lab's key file could not be read.
    #[error("{0}")]
    LabKey(#[from] crate::cli::error::KeyFileError),
}
