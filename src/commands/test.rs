//! Running any test: validate, find or start the agent, run, report.

use super::output::{self, Format};
use crate::agent::{Agent, AgentConfig};
use crate::cli::{common::CommonArgs, read_key};
use crate::controller::{self, RunOptions, Target};
use crate::Failure;
use fathom_proto::plan::TestPlan;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs `plan` as the shared options say and prints its report.
pub fn run(c: &CommonArgs, plan: TestPlan) -> Result<(), Failure> {
    let key = c.key_file.as_deref().map(read_key).transpose().map_err(Failure::Usage)?;
    let format = if c.json {
        Format::Json
    } else if c.csv {
        Format::Csv
    } else {
        Format::Table
    };
    let target = match &c.host {
        Some(h) => Target::resolve(h, plan.socket.ipv6).map_err(Failure::Runtime)?,
        None => embedded_agent(c.ipv6)?,
    };
    let interrupted = interrupt_flag();
    let opts = RunOptions { key, bind: c.bind, progress: true };
    let run = controller::run(&target, plan, &opts, &interrupted).map_err(Failure::Runtime)?;
    let report = fathom_report::build(&run);
    output::print(&report, format);
    match &report.error {
        Some(e) if format == Format::Table => Err(Failure::Runtime(e.clone())),
        Some(_) => Err(Failure::Reported),
        None => Ok(()),
    }
}

/// Starts an agent in this process on loopback (the embedded default).
pub fn embedded_agent(ipv6: bool) -> Result<Target, Failure> {
    let ip = if ipv6 { IpAddr::V6(Ipv6Addr::LOCALHOST) } else { IpAddr::V4(Ipv4Addr::LOCALHOST) };
    let agent = Agent::bind(SocketAddr::new(ip, 0), AgentConfig::default())
        .map_err(|e| Failure::Runtime(format!("cannot start the in-process agent: {e}")))?;
    let addr = agent.local_addr().map_err(|e| Failure::Runtime(e.to_string()))?;
    agent.spawn().map_err(|e| Failure::Runtime(e.to_string()))?;
    Ok(Target { addr, name: addr.to_string(), embedded: true })
}

/// A flag set by Ctrl-C, so an interrupted test still reports what it measured.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let _ = ctrlc::set_handler(move || f.store(true, Ordering::Relaxed));
    flag
}
