//! What ends an iperf3 test early, with fathom as its server or as its client: the step that
//! failed and the OS's word, or what the peer did out of turn. Each message is the one the
//! agent's log, the user or `-J`'s `error` sees.

use super::auth::Denied;
use super::wire::{Refusal, State};
use std::io;
use std::net::SocketAddr;

/// Why an iperf3 test did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    /// A step of the exchange failed at its socket.
    #[error("{step}: {source}")]
    Step {
        /// What was being done, e.g. "sending TEST_START".
        step: String,
        /// The OS's error.
        source: io::Error,
    },
    /// A socket call failed that needs no more words than the OS's.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A client's option could not be set on this end's stream (`-w`, `-C`, `-M`, `-N`, `-b`).
    #[error("{flag}: {source}")]
    Option {
        /// The iperf3 flag.
        flag: &'static str,
        /// The OS's error.
        source: io::Error,
    },
    /// The server refused the client's parameters, with iperf3's code.
    #[error("refused the client's parameters ({0:?})")]
    Params(Refusal),
    /// The server could not apply the client's socket options, with iperf3's code.
    #[error("could not set the client's socket options ({0:?})")]
    SocketOptions(Refusal),
    /// RSA authentication refused the client.
    #[error("not authorized: {0}")]
    NotAuthorized(Denied),
    /// Fewer streams than the test's arrived before the deadline.
    #[error("{arrived} of {wanted} streams connected in time")]
    Streams {
        /// How many arrived.
        arrived: usize,
        /// How many the test has.
        wanted: usize,
    },
    /// The client stopped the test (iperf3's CLIENT_TERMINATE).
    #[error("the client was interrupted")]
    Interrupted,
    /// The client sent a state other than TEST_END while the test ran.
    #[error("the client sent {0:?} while testing")]
    ClientState(Option<State>),
    /// The server is running another test (iperf3's ACCESS_DENIED).
    #[error("the server is busy running a test")]
    Busy,
    /// The server refused the test with iperf3's error `code`.
    #[error("the iperf3 server refused the test (iperf3 error {0})")]
    Refused(i32),
    /// The server sent a state other than the one due.
    #[error("the iperf3 server sent {got:?} (byte {byte}) where {want:?} was due")]
    OutOfTurn {
        /// The state its byte names, if any.
        got: Option<State>,
        /// The byte.
        byte: u8,
        /// The state due.
        want: State,
    },
    /// The server sent a state while the test ran.
    #[error("the iperf3 server sent state {0} while testing")]
    ServerState(u8),
    /// The server never answered a UDP stream's hello.
    #[error("the iperf3 server at {0} did not answer a UDP stream's hello")]
    NoUdpAnswer(SocketAddr),
}

impl TestError {
    /// The error of step `step` failing with the OS's error.
    pub fn at(step: impl Into<String>) -> impl FnOnce(io::Error) -> TestError {
        let step = step.into();
        move |source| TestError::Step { step, source }
    }
}
