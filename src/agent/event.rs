//! What a test's session thread reacts to, and the data connections that arrive for the test:
//! the messages the arrival, pairing and running threads send the session.

use super::error::AgentError;
use fathom_engine::tls::Session;
use fathom_proto::sample::{EndpointInfo, Snapshot};
use fathom_proto::{FrameError, ToAgent};
use socket2::Socket;

/// What the session thread reacts to.
pub enum Event {
    /// A message (or the end) from the controller.
    Ctrl(Result<Option<ToAgent>, FrameError>),
    /// A data connection arrived, or arrival failed.
    Flow(Result<Box<Arrival>, AgentError>),
    /// The running endpoint took a snapshot.
    Snap(Box<Snapshot>),
    /// The running endpoint finished.
    Done(Box<EndpointInfo>),
}

/// A data connection of the test that arrived.
pub struct Arrival {
    /// Its flow.
    pub flow: u32,
    /// Its socket (blocking).
    pub sock: Socket,
    /// TLS tests: its session, and how long the handshake took (ns).
    pub tls: Option<(Session, u64)>,
}
