//! `lab down`: stop the recorded WAN forwarders, charons, agents and sshd processes, delete the lab's namespaces
//! (which removes every veth and bridge inside), wait until the stopped charons have left the process table
//! (their parent collected them), remove the state directory. Works on half-built and stale labs, and on
//! namespaces left without state.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::agent::{self, AgentProcess};
use crate::error::{Error, Result};
use crate::ip::{self, Tool};
use crate::lab::namespaces_of;
use crate::name::check_lab_name;
use crate::state::StateDir;
use crate::{hosts_file, netns, privilege, sshd};

/// How long agents and forwarders get to exit after SIGTERM before SIGKILL.
const AGENT_GRACE: Duration = Duration::from_secs(3);

/// How long the lab's stopped charons get to leave the process table (their parent, PID 1 or a
/// subreaper, collecting them) before `down` returns saying which are still listed.
const REAP_GRACE: Duration = Duration::from_secs(3);

/// What `down` removed, and what it had to leave.
#[derive(Clone, Debug, Default)]
pub struct DownReport {
    /// Namespaces deleted.
    pub namespaces: Vec<String>,
    /// Agents stopped.
    pub agents_stopped: usize,
    /// WAN link forwarders stopped.
    pub forwarders_stopped: usize,
    /// strongSwan charons stopped (`lab up --ipsec`).
    pub charons_stopped: usize,
    /// Things the user should know about, one line each.
    pub warnings: Vec<String>,
}

/// Removes everything lab `name` made. [`Error::NoSuchLab`] if there is nothing.
pub fn down(name: &str) -> Result<DownReport> {
    privilege::require()?;
    check_lab_name(name)?;
    let dir = StateDir::of(name);
    let mut report = DownReport::default();
    let state = match dir.load() {
        Ok(state) => state,
        Err(e @ Error::BadState { .. }) => {
            report
                .warnings
                .push(format!("{e}; removing the lab's namespaces without it"));
            None
        }
        Err(e) => return Err(e),
    };
    let found = namespaces_of(name)?;
    if state.is_none() && found.is_empty() && !dir.exists() {
        return Err(Error::NoSuchLab(name.to_string()));
    }

    let forwarders: Vec<&AgentProcess> = state.iter().flat_map(|s| s.layout.forwarders()).collect();
    report.forwarders_stopped = stop(&forwarders, "forwarders", &mut report.warnings);
    let charons: Vec<&AgentProcess> = state.iter().flat_map(|s| s.layout.charons()).collect();
    report.charons_stopped = stop(&charons, "charons", &mut report.warnings);
    let agents: Vec<&AgentProcess> = state.iter().flat_map(|s| s.layout.agents()).collect();
    report.agents_stopped = stop(&agents, "agents", &mut report.warnings);
    if let Some(s) = &state {
        sshd::end_sessions(&s.layout);
    }
    let sshds: Vec<&AgentProcess> = state.iter().flat_map(|s| s.layout.sshds()).collect();
    stop(&sshds, "sshd processes", &mut report.warnings);

    let mut namespaces: BTreeSet<String> = found.into_iter().collect();
    namespaces.extend(
        state
            .iter()
            .flat_map(|s| s.layout.namespaces().map(str::to_string))
            .filter(|ns| netns::exists(ns)),
    );
    for ns in &namespaces {
        let pids = netns::pids_in(ns);
        if !pids.is_empty() {
            let named: Vec<String> = pids.iter().map(|&pid| described(pid)).collect();
            report.warnings.push(format!(
                "{ns} still holds processes [{}] that the lab did not record; \
                 they keep its interfaces alive until they exit",
                named.join(", ")
            ));
        }
    }
    let script: String = namespaces
        .iter()
        .map(|ns| format!("netns del {ns}\n"))
        .collect();
    if !script.is_empty() {
        ip::run(Tool::Ip, None, true, &script)?;
    }
    hosts_file::remove(name);
    let files = crate::files_dir(name);
    match std::fs::remove_dir_all(&files) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => report
            .warnings
            .push(format!("could not remove {}: {e}", files.display())),
        _ => {}
    }
    report.namespaces = namespaces.into_iter().collect();
    if let Some(s) = &state {
        report.warnings.extend(unreaped(&s.layout));
    }
    dir.remove()?;
    Ok(report)
}

/// Waits for the lab's charons to leave the process table, so that `down` returns when they are
/// gone, not merely exited (`pgrep charon` lists a zombie); a warning for each still listed
/// after [`REAP_GRACE`], naming it and the parent that has not collected it. Only the charons:
/// an agent or a forwarder lingers the same way, but waiting for PID 1 here (about 1.4 s)
/// would make every lab's `down` (0.1 s for 8 hosts) 17 times slower, for processes that hold
/// nothing any more and that no tool outside fathom looks for by name.
fn unreaped(layout: &crate::layout::Layout) -> Vec<String> {
    let charons: Vec<&AgentProcess> = layout.charons().collect();
    agent::wait_reaped(&charons, REAP_GRACE)
        .into_iter()
        .map(|(pid, parent)| {
            format!(
                "charon {pid} has exited but is still listed (a zombie) after {} s: its parent \
                 {} has not collected it",
                REAP_GRACE.as_secs(),
                described(parent)
            )
        })
        .collect()
}

/// `pid` with its command line, e.g. `4707 (sleep 60)`, so a warning says what was left.
fn described(pid: u32) -> String {
    match crate::process::cmdline(pid) {
        Some(argv) if !argv.is_empty() => format!("{pid} ({})", argv.join(" ")),
        _ => format!("{pid} (exiting)"),
    }
}

/// Stops the recorded `processes` (`what`: agents or forwarders); returns how many were running
/// and stopped, and warns about any that would not go.
fn stop(processes: &[&AgentProcess], what: &str, warnings: &mut Vec<String>) -> usize {
    let running = processes.iter().filter(|p| p.is_running()).count();
    let stuck = agent::stop_all(processes, AGENT_GRACE);
    if !stuck.is_empty() {
        warnings.push(format!("{what} {stuck:?} did not exit after SIGKILL"));
    }
    running - stuck.len()
}
