//! `--agents-from` and its companions: the test's agents found through a cluster's own
//! records (Kubernetes, DNS, a hostfile, the Slurm job) rather than named one by one; found
//! once, before any plan is built, so a test's connections count the found clients. An agent
//! listed but not answering counts as missing, as one not found does.

use super::error::ArgsError;
use super::units::parse_duration;
use crate::Failure;
use fathom_cluster::discover::select::{self, Choice, Chosen};
use fathom_cluster::discover::{self, Error, Source};
use std::time::Duration;

/// How a multi-host test finds its agents.
#[derive(clap::Args, Debug, Clone)]
pub struct DiscoveryArgs {
    /// Find the agents: k8s:svc=NAME[,ns=NS], k8s:selector=LABELS[,ns=NS], dns:NAME[:PORT],
    /// hostfile:PATH or slurm. The first found is the server, the others clients, unless
    /// --server-index, --server NAME or --clients HOSTLIST pick among them.
    #[arg(long, value_name = "SOURCE", conflicts_with = "host")]
    pub agents_from: Option<Source>,
    /// Wait until N agents are found (ready), at most --discovery-timeout.
    #[arg(long, value_name = "N", requires = "agents_from", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub expect: Option<u64>,
    /// Go on with at least M agents when fewer than expected are found, naming the missing.
    #[arg(long, value_name = "M", requires = "agents_from", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub min_agents: Option<u64>,
    /// How long to wait for --expect agents.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = parse_duration)]
    pub discovery_timeout: u64,
    /// Which found agent is the server (from 0, in the source's order).
    #[arg(
        long,
        value_name = "I",
        requires = "agents_from",
        conflicts_with = "server"
    )]
    pub server_index: Option<usize>,
    /// The agents found, once found.
    #[arg(skip)]
    pub found: Option<Chosen>,
}

impl DiscoveryArgs {
    /// Checks the counts agree; errors name the flags.
    pub fn validate(&self) -> Result<(), ArgsError> {
        match (self.min_agents, self.expect) {
            (Some(min), Some(expect)) if min > expect => {
                Err(ArgsError::MinAboveExpect { min, expect })
            }
            (Some(_), None) => Err(ArgsError::Needs {
                flag: "--min-agents",
                needs: "--expect N (how many to wait for)",
            }),
            _ => Ok(()),
        }
    }

    /// Client agents found (none before discovery or without it).
    pub fn clients(&self) -> Option<usize> {
        self.found.as_ref().map(|f| f.clients.len())
    }
}

/// Finds the agents of `d`'s `--agents-from`, if any, and keeps them in `d`; `server` and
/// `clients` are the test's --server and --clients, which pick among them.
pub fn resolve(
    d: &mut DiscoveryArgs,
    server: Option<&str>,
    clients: &[String],
) -> Result<(), Failure> {
    let Some(source) = d.agents_from.clone() else {
        return Ok(());
    };
    d.validate()?;
    let choice = Choice {
        expect: d.expect.map(|n| n as usize),
        min_agents: d.min_agents.map(|n| n as usize),
        server_index: d.server_index,
        server: server.map(String::from),
        clients: (!clients.is_empty()).then(|| clients.join(",")),
    };
    let timeout = Duration::from_nanos(d.discovery_timeout);
    let found = discover::discover(&source, choice.expect, timeout).map_err(failure)?;
    let found = discover::reachable(found, answers);
    let chosen = select::choose(found, &choice).map_err(failure)?;
    if let Some(w) = &chosen.warning {
        eprintln!("fathom: warning: {w}");
    }
    d.found = Some(chosen);
    Ok(())
}

/// How long a found agent's control port has to accept a connection.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether a found agent's control port accepts a connection (the agent lets a connection that
/// sends nothing go).
fn answers(agent: &discover::Agent) -> Result<(), Unanswered> {
    let target = crate::controller::Target::resolve(&agent.addr, None)?;
    std::net::TcpStream::connect_timeout(&target.addr, PROBE_TIMEOUT).map(drop)?;
    Ok(())
}

/// Why a found agent counts as unreachable: its address, or the connection to it.
#[derive(Debug, thiserror::Error)]
enum Unanswered {
    /// Its address does not resolve to one to connect to.
    #[error(transparent)]
    Address(#[from] crate::controller::TargetError),
    /// Its control port refused the connection or did not accept it in time.
    #[error(transparent)]
    Connect(#[from] std::io::Error),
}

/// Discovery's error as the exit code it calls for.
fn failure(e: Error) -> Failure {
    match e {
        Error::Usage(m) => Failure::Usage(m),
        Error::Runtime(m) => Failure::Runtime(m),
    }
}
