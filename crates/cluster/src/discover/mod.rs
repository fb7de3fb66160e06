//! Finding the agents where a cluster engine placed them: one module per source, one
//! [`Source`] naming it (`--agents-from`), and [`discover`] waiting until enough are ready.
//!
//! | source | module | what it reads |
//! | --- | --- | --- |
//! | `hostfile:PATH` | [`hostfile`] | Open MPI hostfile lines, Slurm host lists, group labels |
//! | `slurm` | [`slurm`] | the job's node list (`SLURM_JOB_NODELIST`) |
//! | `dns:NAME[:PORT]` | [`dns`] | A/AAAA records, or SRV records (`_svc._tcp.NAME`) |
//! | `k8s:svc=NAME` | [`k8s`] | the Service's EndpointSlices, through the API |
//!
//! Which of the found agents is the server and which are clients is [`select`]'s part.

mod capped;
pub mod dns;
mod found;
pub mod hostfile;
pub mod k8s;
pub mod select;
pub mod slurm;

pub use found::{Agent, Error, Found, SourceError};
use std::time::{Duration, Instant};

/// The least time one look is given, even past the discovery deadline.
const MIN_LOOK: Duration = Duration::from_millis(500);

/// Where the agents are listed (`--agents-from`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `hostfile:PATH`.
    Hostfile(std::path::PathBuf),
    /// `slurm`: the node list of the job this runs in.
    Slurm,
    /// `dns:NAME[:PORT]`.
    Dns(dns::Query),
    /// `k8s:svc=NAME[,ns=NS]` or `k8s:selector=LABELS[,ns=NS]`.
    K8s(k8s::Query),
}

impl std::str::FromStr for Source {
    type Err = SourceError;

    fn from_str(s: &str) -> Result<Source, SourceError> {
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        match kind {
            "hostfile" if !rest.is_empty() => Ok(Source::Hostfile(rest.into())),
            "hostfile" => Err(SourceError::NoPath),
            "slurm" if rest.is_empty() => Ok(Source::Slurm),
            "slurm" => Err(SourceError::SlurmArgs(s.into())),
            "dns" => rest.parse().map(Source::Dns),
            "k8s" => rest.parse().map(Source::K8s),
            _ => Err(SourceError::Unknown(s.into())),
        }
    }
}

impl Source {
    /// Looks once; a DNS look ends within `within`.
    pub fn list(&self, within: Duration) -> Result<Found, Error> {
        match self {
            Source::Hostfile(path) => hostfile::read(path).map(ready),
            Source::Slurm => slurm::nodes().map(ready),
            Source::Dns(q) => q.list(within).map(ready),
            Source::K8s(q) => q.list(),
        }
    }

    /// True for sources that list the same agents whenever asked (a file, the job's nodes).
    fn fixed(&self) -> bool {
        matches!(self, Source::Hostfile(_) | Source::Slurm)
    }
}

/// All of `agents`, ready.
fn ready(agents: Vec<Agent>) -> Found {
    Found {
        ready: agents,
        ..Found::default()
    }
}

/// Agents probed at once when checking that they answer.
const PROBES_AT_ONCE: usize = 64;

/// `found` with the ready agents that `connect` cannot reach moved to `unreachable`, so that
/// they count as missing (and `--min-agents` may let the test go on without them). Probes run
/// in parallel, a few dozen at a time; the order of the rest is kept.
pub fn reachable<F, E>(mut found: Found, connect: F) -> Found
where
    F: Fn(&Agent) -> Result<(), E> + Sync,
    E: std::fmt::Display + Send,
{
    let mut answers = Vec::with_capacity(found.ready.len());
    for chunk in found.ready.chunks(PROBES_AT_ONCE) {
        std::thread::scope(|s| {
            let probes: Vec<_> = chunk.iter().map(|a| s.spawn(|| connect(a))).collect();
            answers.extend(probes.into_iter().map(|p| match p.join() {
                Ok(answer) => answer.map_err(|e| e.to_string()),
                Err(_) => Err("the probe failed".to_string()),
            }));
        });
    }
    let agents = std::mem::take(&mut found.ready);
    for (agent, answer) in agents.into_iter().zip(answers) {
        match answer {
            Ok(()) => found.ready.push(agent),
            Err(why) => found.unreachable.push((agent.name, why)),
        }
    }
    found
}

/// Looks at `source` until it lists at least `expect` ready agents (once without `expect`, or
/// for a fixed source) or `timeout` passes; returns the last look.
pub fn discover(source: &Source, expect: Option<usize>, timeout: Duration) -> Result<Found, Error> {
    let deadline = Instant::now() + timeout;
    loop {
        // A look may take the time left, and at least a moment.
        let left = deadline.saturating_duration_since(Instant::now());
        let found = source.list(left.max(MIN_LOOK))?;
        let enough = expect.is_none_or(|n| found.ready.len() >= n);
        let left = deadline.saturating_duration_since(Instant::now());
        if enough || source.fixed() || left.is_zero() {
            return Ok(found);
        }
        std::thread::sleep(left.min(Duration::from_millis(500)));
    }
}
