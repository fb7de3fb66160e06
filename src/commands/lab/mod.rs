//! `fathom lab`: the lab's command line turned into lab calls, and what they print.
//!
//! Exit codes: 0 ok; 1 failure (or, for `status`, a stale lab); 2 bad usage (a bad name,
//! topology or WAN parameter, or several labs and none named); `exec` passes on the command's.

mod status_text;

use crate::cli::lab::{LabArgs, LabCommand, UpArgs, WanCommand};
use crate::Failure;
use fathom_lab::{
    resolve_name, set_wan, status, AgentCommand, Lab, Topology, UpOptions, WanLinkStatus,
    STATUS_SCHEMA_VERSION,
};
use serde::Serialize;
use status_text::summary;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The `lab status --json` document when there is no status to show.
#[derive(Serialize)]
struct StatusError {
    schema_version: u32,
    error: String,
}

/// Runs a `fathom lab` command; `fathom_exe` is the binary the agents (`<exe> serve`) and the
/// WAN forwarders (`<exe> lab wan-router`) run.
/// Returns the process exit code.
pub fn run(args: LabArgs, fathom_exe: &Path) -> anyhow::Result<i32> {
    match args.cmd {
        LabCommand::Up(a) => up(a, fathom_exe),
        LabCommand::Down { name } => down(name.as_deref()),
        LabCommand::Status { name, json } => show_status(name.as_deref(), json),
        LabCommand::Exec { name, host, cmd } => {
            let lab = Lab::load(&resolve_name(name.as_deref())?)?;
            Ok(lab.exec(&host, &cmd)?)
        }
        LabCommand::Wan {
            cmd:
                WanCommand::Set {
                    name,
                    link,
                    params,
                    direction,
                    reset,
                },
        } => {
            let lab = Lab::load(&resolve_name(name.as_deref())?)?;
            let status = set_wan(&lab, &link, &params.join(" "), direction.into(), reset)?;
            print(&set_summary(&status))?;
            Ok(0)
        }
        LabCommand::WanRouter { name, link } => {
            fathom_lab::wan_router(&name, &link)?;
            Ok(0)
        }
    }
}

/// A failed lab command as the exit code should tell it: the user's input (a name, a
/// topology, WAN parameters, several labs and none named) is bad usage; the rest is a failure.
pub fn failure(e: anyhow::Error) -> Failure {
    use fathom_lab::Error::*;
    match e.downcast_ref::<fathom_lab::Error>() {
        Some(BadName(_) | Topology(_) | WanParams { .. } | Ambiguous(_)) => {
            Failure::Usage(e.to_string())
        }
        _ => Failure::Runtime(e.to_string()),
    }
}

/// `lab up`: builds the topology the options name, starts the lab, says how to use it.
fn up(a: UpArgs, fathom_exe: &Path) -> anyhow::Result<i32> {
    let (subnet, rate) = (a.subnet.as_deref(), a.rate.as_deref());
    let topology = match (a.hosts, &a.topology, &a.wan) {
        (Some(n), _, Some(params)) => Topology::split(n, subnet, a.mtu, rate, params)?,
        (Some(n), _, None) => Topology::star(n, subnet, a.mtu, rate)?,
        (None, Some(path), _) => Topology::load(path).map_err(|e| match e {
            fathom_lab::Error::Io { .. } => fathom_lab::Error::Topology(e.to_string()),
            other => other,
        })?,
        (None, None, _) => anyhow::bail!("lab up: give --hosts N or a topology file"),
    };
    let asked = match (a.ipsec, &topology.ipsec) {
        (Some(_), Some(_)) => {
            return Err(fathom_lab::Error::Topology(
                "--ipsec and the topology's `ipsec` keys: give one of them".into(),
            )
            .into())
        }
        (Some(suite), None) => Some((suite, None)),
        (None, Some(t)) => Some((t.suite, Some(t.pairs.clone()))),
        (None, None) if a.ipsec_datapath.is_some() || a.ipsec_wrong_psk.is_some() => {
            return Err(fathom_lab::Error::Topology(
                "--ipsec-datapath: the lab has no IPsec (give --ipsec SUITE or `ipsec` keys in \
                 the topology)"
                    .into(),
            )
            .into())
        }
        (None, None) => None,
    };
    let ipsec = match asked {
        Some((suite, pairs)) => {
            fathom_lab::ipsec::check_packages()?;
            let probe_ns = format!("fl-{}-ipsec-probe", a.name);
            Some(fathom_lab::ipsec::IpsecOptions {
                suite,
                datapath: fathom_lab::ipsec::choose(suite, a.ipsec_datapath, &probe_ns)?,
                pairs,
                wrong_psk_host: a.ipsec_wrong_psk,
            })
        }
        None => None,
    };
    let opts = UpOptions {
        agent_port: a.agent_port,
        ready_timeout: Duration::from_secs(a.ready_timeout),
        sshd: a.sshd,
        files: a.files_root,
        ipsec,
        ..UpOptions::new(&a.name, AgentCommand::fathom(fathom_exe))
    };
    let started = Instant::now();
    let lab = Lab::up(&topology, &opts)?;
    print(&up_summary(&lab, started.elapsed()))?;
    Ok(0)
}

/// `lab down`: removes the lab and says what went.
fn down(name: Option<&str>) -> anyhow::Result<i32> {
    let name = resolve_name(name)?;
    let started = Instant::now();
    let report = fathom_lab::down(&name)?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let (ns, agents, secs) = (
        report.namespaces.len(),
        report.agents_stopped,
        started.elapsed().as_secs_f64(),
    );
    let forwarders = match report.forwarders_stopped {
        0 => String::new(),
        n => format!(", {}", count(n, "forwarder", "forwarders")),
    } + &match report.charons_stopped {
        0 => String::new(),
        n => format!(", {}", count(n, "charon", "charons")),
    };
    print(&format!(
        "lab '{name}' removed: {}, {}{forwarders} stopped, in {secs:.2} s\n",
        count(ns, "namespace", "namespaces"),
        count(agents, "agent", "agents")
    ))?;
    Ok(0)
}

/// `lab status`: as tables, or one JSON document (errors included); exit 1 for a stale lab.
fn show_status(name: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let result = resolve_name(name).and_then(|n| status(&n));
    match (result, json) {
        (Ok(s), false) => print(&status_text::render(&s)).map(|()| i32::from(s.stale)),
        (Ok(s), true) => {
            print(&format!("{}\n", serde_json::to_string_pretty(&s)?)).map(|()| i32::from(s.stale))
        }
        (Err(e), true) => {
            let doc = StatusError {
                schema_version: STATUS_SCHEMA_VERSION,
                error: e.to_string(),
            };
            print(&format!("{}\n", serde_json::to_string(&doc)?)).map(|()| 1)
        }
        (Err(e), false) => Err(e.into()),
    }
}

/// What `wan set` prints: the link's parameters in each direction.
fn set_summary(status: &WanLinkStatus) -> String {
    let [a, b] = &status.ends;
    format!(
        "wan {}: {a} -> {b} {}; {b} -> {a} {}\n",
        status.name,
        summary(&status.params.a_to_b),
        summary(&status.params.b_to_a)
    )
}

/// What `up` prints: the hosts, and how to use and remove the lab.
fn up_summary(lab: &Lab, took: Duration) -> String {
    let hosts = lab.hosts();
    let first = &hosts[0];
    let last = &hosts[hosts.len() - 1];
    let range = if hosts.len() == 1 {
        format!("{} {}", first.name, first.address())
    } else {
        format!(
            "{} {} .. {} {}",
            first.name,
            first.address(),
            last.name,
            last.address()
        )
    };
    let name = lab.name();
    let wans: String = lab
        .layout()
        .wans
        .iter()
        .map(|w| {
            let [a, b] = &w.spec.ends;
            format!(
                "WAN link {}: {a} -> {b} {}; {b} -> {a} {}\n",
                w.spec.name,
                summary(&w.spec.a_to_b.to_string()),
                summary(&w.spec.b_to_a.to_string())
            )
        })
        .collect();
    let ipsec = lab.layout().ipsec.as_ref().map_or(String::new(), |i| {
        format!(
            "IPsec {} on {}, ESP in {} (a strongSwan charon in each of their hosts)\n",
            i.suite,
            count(i.links.len(), "link", "links"),
            match i.datapath {
                fathom_lab::ipsec::Datapath::Kernel => "the kernel",
                fathom_lab::ipsec::Datapath::Userspace =>
                    "user space (kernel-libipsec, TUN ipsec0)",
            }
        )
    });
    let ssh = if hosts.iter().any(|h| h.sshd.is_some()) {
        format!(
            "ssh between hosts: fathom lab exec --name {name} {} -- ssh {} hostname\n",
            first.name, last.name
        )
    } else {
        String::new()
    };
    let files = fathom_lab::files_dir(name);
    let serves_files = |h: &fathom_lab::Host| {
        h.agent
            .as_ref()
            .is_some_and(|a| a.argv.iter().any(|x| x == "--files-root"))
    };
    let files = if serves_files(first) {
        format!(
            "files below:       {}/HOST (fathom file put --size 1G :x --server {} --clients {})\n",
            files.display(),
            last.name,
            first.name
        )
    } else {
        String::new()
    };
    format!(
        "lab '{name}' is up in {:.2} s: {} ({range}), {}, agents on port {}\n{wans}{ipsec}\
         run inside a host: fathom lab exec --name {name} {} -- ip addr\n{ssh}{files}\
         remove it:         fathom lab down --name {name}\n",
        took.as_secs_f64(),
        count(hosts.len(), "host", "hosts"),
        count(lab.switches().len(), "switch", "switches"),
        first.agent_port,
        first.name,
    )
}

/// `1 host`, `2 hosts`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn print(text: &str) -> anyhow::Result<()> {
    match io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
