//! `lab status`: what a lab has and whether it is whole, as a [`Status`] (printed by the
//! binary as text, or serialized as JSON).
//!
//! JSON (`schema_version` 2; version 1 had no `wan`):
//! `{schema_version, name, state_dir, complete, stale, problems: [string],
//!   hosts: [{name, netns, netns_present, addresses: ["10.77.0.1/16"], agent: {port, pid, alive}}],
//!   switches: [{name, netns, netns_present, subnet}],
//!   links: [{ends: ["h1:eth0", "sw1:h1"], mtu, rate_bps}],
//!   wan: [{name, router, netns, netns_present, ends: ["h1", "h2"],
//!          params: {a_to_b, b_to_a}, counters: {a_to_b: {...}, b_to_a: {...}} | null,
//!          forwarder: {pid, alive, error, cpu_s}}],
//!   ipsec: {suite, datapath, links: [{name, ike_state, child_state, bytes_in, bytes_out,
//!           packets_in, packets_out, rekeys, error}]}}`
//! (`ipsec` only for a lab made with `--ipsec`; a host then also has `charon: {pid, alive}`).
//! (a WAN link's counters are [`fathom_wan::DirCounters`]: received, forwarded, forwarded_bytes,
//! delayed, dropped_loss, dropped_queue, dropped_oversize, dropped_overflow, dropped_ring,
//! dropped_tx_error, queue_peak_packets, queue_peak_bytes, held_peak_packets).
//! A lab is stale when `problems` is not empty: `up` did not finish, a namespace, an agent or a
//! forwarder is gone, or namespaces of the lab exist without state.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::ipsec::{self, IpsecStatus};
use crate::lab::{namespaces_of, Lab};
use crate::layout::Host;
use crate::netns;
use crate::state::StateDir;
use crate::wan::{self, WanLinkStatus};

/// Version of the JSON status document.
pub const STATUS_SCHEMA_VERSION: u32 = 2;

/// A lab's status.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    /// JSON schema version.
    pub schema_version: u32,
    /// The lab's name.
    pub name: String,
    /// Its state directory.
    pub state_dir: PathBuf,
    /// Whether `up` finished.
    pub complete: bool,
    /// Whether anything is wrong (see `problems`).
    pub stale: bool,
    /// What is wrong, one line each.
    pub problems: Vec<String>,
    /// Hosts.
    pub hosts: Vec<HostStatus>,
    /// Switches.
    pub switches: Vec<SwitchStatus>,
    /// Links.
    pub links: Vec<LinkStatus>,
    /// WAN links, with the emulator's parameters and counters.
    pub wan: Vec<WanLinkStatus>,
    /// IPsec between the hosts (`lab up --ipsec`): suite, data path, each link's SAs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipsec: Option<IpsecStatus>,
}

/// A host's status.
#[derive(Clone, Debug, Serialize)]
pub struct HostStatus {
    /// Host name.
    pub name: String,
    /// Its namespace.
    pub netns: String,
    /// Whether the namespace exists.
    pub netns_present: bool,
    /// Its addresses with prefix length, in interface order.
    pub addresses: Vec<String>,
    /// Its agent.
    pub agent: AgentStatus,
    /// Its strongSwan charon (`lab up --ipsec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub charon: Option<ProcessStatus>,
}

/// A recorded process's status.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessStatus {
    /// Its pid.
    pub pid: u32,
    /// Whether that process still runs.
    pub alive: bool,
}

/// An agent's status.
#[derive(Clone, Debug, Serialize)]
pub struct AgentStatus {
    /// Port it listens on.
    pub port: u16,
    /// Its pid, once started.
    pub pid: Option<u32>,
    /// Whether that process still runs.
    pub alive: bool,
}

/// A switch's status.
#[derive(Clone, Debug, Serialize)]
pub struct SwitchStatus {
    /// Switch name.
    pub name: String,
    /// Its namespace.
    pub netns: String,
    /// Whether the namespace exists.
    pub netns_present: bool,
    /// Its segment's subnet.
    pub subnet: String,
}

/// A link's status.
#[derive(Clone, Debug, Serialize)]
pub struct LinkStatus {
    /// Both ends as `node:interface`.
    pub ends: [String; 2],
    /// MTU.
    pub mtu: u32,
    /// Rate limit in bits per second, if any.
    pub rate_bps: Option<u64>,
}

/// The status of lab `name`, with or without state. [`Error::NoSuchLab`] if nothing exists.
pub fn status(name: &str) -> Result<Status> {
    let lab = match Lab::load(name) {
        Ok(lab) => lab,
        Err(Error::NoSuchLab(_)) => return orphan_status(name),
        Err(e) => return Err(e),
    };
    let mut problems = Vec::new();
    if !lab.is_complete() {
        problems
            .push("`lab up` did not finish (it crashed, failed or is still running)".to_string());
    }
    let hosts: Vec<HostStatus> = lab
        .hosts()
        .iter()
        .map(|h| host_status(h, &mut problems))
        .collect();
    let switches: Vec<SwitchStatus> = lab
        .switches()
        .iter()
        .map(|s| SwitchStatus {
            name: s.name.clone(),
            netns: s.netns.clone(),
            netns_present: netns::exists(&s.netns),
            subnet: s.subnet.to_string(),
        })
        .collect();
    for s in switches.iter().filter(|s| !s.netns_present) {
        problems.push(format!(
            "namespace {} of switch {} is gone",
            s.netns, s.name
        ));
    }
    let wan = wan::wan_links(&lab)?;
    problems.extend(wan.iter().filter_map(wan_problem));
    let known: Vec<&str> = lab.layout().namespaces().collect();
    for ns in namespaces_of(name)?
        .into_iter()
        .filter(|ns| !known.contains(&ns.as_str()))
    {
        problems.push(format!("namespace {ns} is not in the lab's state"));
    }
    let links = lab
        .links()
        .iter()
        .map(|l| LinkStatus {
            ends: l
                .ends
                .clone()
                .map(|e| format!("{}:{}", e.node, e.interface)),
            mtu: l.mtu,
            rate_bps: l.rate_bps,
        })
        .collect();
    Ok(Status {
        schema_version: STATUS_SCHEMA_VERSION,
        name: name.to_string(),
        state_dir: lab.state_dir().to_path_buf(),
        complete: lab.is_complete(),
        stale: !problems.is_empty(),
        problems,
        hosts,
        switches,
        links,
        wan,
        ipsec: ipsec::link_status(&lab),
    })
}

/// Host `h`'s status; what is wrong with it goes into `problems`.
fn host_status(h: &Host, problems: &mut Vec<String>) -> HostStatus {
    let netns_present = netns::exists(&h.netns);
    let alive = h.agent.as_ref().is_some_and(|a| a.is_running());
    if !netns_present {
        problems.push(format!("namespace {} of host {} is gone", h.netns, h.name));
    }
    let charon = h.charon.as_ref().map(|c| ProcessStatus {
        pid: c.pid,
        alive: c.is_running(),
    });
    if let (Some(a), false) = (&h.agent, alive) {
        problems.push(format!(
            "agent of host {} (pid {}) is not running",
            h.name, a.pid
        ));
    }
    if let Some(c) = charon.as_ref().filter(|c| !c.alive) {
        problems.push(format!(
            "charon of host {} (pid {}) is not running",
            h.name, c.pid
        ));
    }
    HostStatus {
        name: h.name.clone(),
        netns: h.netns.clone(),
        netns_present,
        addresses: h
            .interfaces
            .iter()
            .map(|i| format!("{}/{}", i.address, i.prefix_len))
            .collect(),
        agent: AgentStatus {
            port: h.agent_port,
            pid: h.agent.as_ref().map(|a| a.pid),
            alive,
        },
        charon,
    }
}

/// What is wrong with a WAN link, if anything.
fn wan_problem(w: &WanLinkStatus) -> Option<String> {
    let name = &w.name;
    let f = &w.forwarder;
    match (f.pid, f.alive, &f.error) {
        _ if !w.netns_present => Some(format!(
            "namespace {} of WAN link {name}'s router is gone",
            w.netns
        )),
        (Some(pid), false, _) => Some(format!(
            "forwarder of WAN link {name} (pid {pid}) is not running"
        )),
        (_, true, Some(e)) => Some(format!("forwarder of WAN link {name} does not answer: {e}")),
        _ => None,
    }
}

/// Status of a lab without state: stale if namespaces of it exist, else no such lab.
fn orphan_status(name: &str) -> Result<Status> {
    let found = namespaces_of(name)?;
    if found.is_empty() {
        return Err(Error::NoSuchLab(name.to_string()));
    }
    Ok(Status {
        schema_version: STATUS_SCHEMA_VERSION,
        name: name.to_string(),
        state_dir: StateDir::of(name).path().to_path_buf(),
        complete: false,
        stale: true,
        problems: vec![format!(
            "namespaces {} exist but the lab has no state",
            found.join(", ")
        )],
        hosts: Vec::new(),
        switches: Vec::new(),
        links: Vec::new(),
        wan: Vec::new(),
        ipsec: None,
    })
}
