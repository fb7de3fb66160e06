//! The lab's error type: one variant per thing a user can act on.

use std::io;
use std::path::PathBuf;

/// Why a lab operation failed. Every message is one line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The process lacks the capabilities to create or enter network namespaces.
    #[error(
        "fathom lab needs root: network namespaces require CAP_NET_ADMIN and CAP_SYS_ADMIN \
         (run it with sudo)"
    )]
    NotPrivileged,
    /// A lab or node name is not acceptable.
    #[error("{0}")]
    BadName(String),
    /// A topology (file or `--hosts` flags) is invalid.
    #[error("topology: {0}")]
    Topology(String),
    /// IPsec cannot be set up (strongSwan missing, the kernel lacks ESP for the kernel path, a
    /// host's charon failed or refused its peer).
    #[error("{0}")]
    Ipsec(String),
    /// No state and no namespaces exist for this lab name.
    #[error("no lab named '{0}' is running (start one with `fathom lab up`)")]
    NoSuchLab(String),
    /// Several labs run and none was named.
    #[error("several labs are running ({0}); pick one with --name")]
    Ambiguous(String),
    /// A lab of this name (or leftovers of one) already exists.
    #[error(
        "lab '{name}' already exists ({what}); remove it with `fathom lab down --name {name}`"
    )]
    Exists {
        /// The lab name.
        name: String,
        /// What was found: state directory or namespaces.
        what: String,
    },
    /// The lab has no host or switch of this name.
    #[error("lab '{lab}' has no node named '{node}' (nodes: {known})")]
    NoSuchNode {
        /// The lab name.
        lab: String,
        /// The name asked for.
        node: String,
        /// The names that exist, comma-separated.
        known: String,
    },
    /// An external tool (`ip`, `tc`) failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command as typed, e.g. `ip -n fl-lab-h1 -batch -`.
        command: String,
        /// Its first line of stderr, or why it could not run.
        message: String,
    },
    /// A host's sshd (`lab up --sshd`) could not be set up or did not listen in time.
    #[error("sshd on host {host}: {reason}")]
    Sshd {
        /// The host.
        host: String,
        /// What happened, with the end of sshd's log when there is one.
        reason: String,
    },
    /// An agent did not accept connections in time.
    #[error("agent on host {host} is not ready: {reason}")]
    AgentNotReady {
        /// The host whose agent failed.
        host: String,
        /// What happened, with the end of the agent's log when there is one.
        reason: String,
    },
    /// The lab has no WAN link of this name.
    #[error("lab '{lab}' has no WAN link named '{name}' (WAN links: {known})")]
    NoSuchWan {
        /// The lab name.
        lab: String,
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated, or `none`.
        known: String,
    },
    /// WAN emulator parameters that do not parse; the message names the key at fault.
    #[error("wan {link}: {message}")]
    WanParams {
        /// The WAN link.
        link: String,
        /// What is wrong, e.g. `delay: '50' needs a unit: ns, us, ms or s`.
        message: String,
    },
    /// A WAN link's forwarder did not start, or does not answer on its control socket.
    #[error("forwarder of WAN link {link}: {reason}")]
    Forwarder {
        /// The WAN link.
        link: String,
        /// What happened, with the end of its log when there is one.
        reason: String,
    },
    /// Interfaces did not come up in time.
    #[error("interfaces {interfaces} in {netns} did not come up")]
    LinkNotUp {
        /// The namespace.
        netns: String,
        /// The interfaces still down, comma-separated.
        interfaces: String,
    },
    /// Some I/O failed; `context` says on what.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. "writing /run/fathom/lab/x/state.json".
        context: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The state file exists but cannot be understood.
    #[error("state file {path} is unreadable: {message}; remove the lab with `fathom lab down`")]
    BadState {
        /// The state file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// The lab's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds a context string to an `io::Error`.
pub(crate) trait IoContext<T> {
    /// Wraps the error as [`Error::Io`] with the context produced by `f`.
    fn context(self, f: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn context(self, f: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Io {
            context: f(),
            source,
        })
    }
}
