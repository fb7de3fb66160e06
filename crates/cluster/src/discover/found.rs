//! What discovery gives and how it fails: the agents a source names, what one look at it
//! found, and why a look or a source's text was refused.

/// One agent a source names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// How results name it: the hostfile's host, the pod, the SRV target, else its address.
    pub name: String,
    /// Where its control port is, as `--server` takes it: HOST, HOST:PORT or `[V6]:PORT`.
    pub addr: String,
    /// Its group in per-group results (the hostfile's `group=`, the endpoint's zone or node).
    pub group: Option<String>,
}

/// What one look at a source found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The agents ready to test with, in the source's order.
    pub ready: Vec<Agent>,
    /// Agents the source lists as not ready (Kubernetes endpoints), by name.
    pub not_ready: Vec<String>,
    /// Agents the source lists but whose control port did not answer
    /// ([`reachable`](super::reachable)): name, why.
    pub unreachable: Vec<(String, String)>,
}

/// Why discovery failed: bad usage (exit 2) or a failure at run time (exit 1).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The source or its file is wrong: the user must fix the command or the file.
    #[error("{0}")]
    Usage(String),
    /// The source could not be read, or did not name enough agents.
    #[error("{0}")]
    Runtime(String),
}

/// Why an `--agents-from` source does not parse; each carries the text at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// `hostfile` without its path.
    #[error("hostfile: name the file, hostfile:PATH")]
    NoPath,
    /// `slurm:` with something after it.
    #[error("'{0}': slurm takes nothing after it")]
    SlurmArgs(String),
    /// Not a known source.
    #[error(
        "'{0}' is not a source; try k8s:svc=NAME[,ns=NS], k8s:selector=LABELS, \
         dns:NAME[:PORT], hostfile:PATH or slurm"
    )]
    Unknown(String),
    /// A `dns:` port that is not a port number.
    #[error("dns:{query}: '{port}' is not a port number")]
    DnsPort {
        /// The text after `dns:`.
        query: String,
        /// The port as written.
        port: String,
    },
    /// A `dns:` source without a usable name.
    #[error("dns:{0}: name a DNS name, dns:NAME[:PORT]")]
    DnsName(String),
    /// A port on an SRV name.
    #[error("dns:{0}: SRV records carry their ports; drop ':PORT'")]
    SrvPort(String),
    /// A `k8s:` item that is not a known key.
    #[error("k8s:{query}: '{item}' is not svc=NAME, selector=LABELS, ns=NS, group=zone|node or names=pod|node")]
    K8sItem {
        /// The text after `k8s:`.
        query: String,
        /// The item at fault.
        item: String,
    },
    /// A `k8s:` source naming neither a service nor a selector.
    #[error("k8s:{0}: name svc=NAME or selector=LABELS")]
    K8sSelector(String),
}
