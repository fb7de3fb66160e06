//! The agents a command tests with: a [`Testbed`] finds (or starts) the server and clients the
//! shared options name, once per command, and runs plans on them into reports. Commands and the
//! method (iterations, sweeps) both use it.

use crate::agent::{Agent, AgentConfig};
use crate::cli::{common::CommonArgs, read_key};
use crate::controller::{self, RunOptions, Target, Topology};
use crate::Failure;
use fathom_engine::sockopt::CC_REFUSED;
use fathom_proto::plan::TestPlan;
use fathom_report::model::{IpsecLinkResult, IpsecResult, WanLinkResult};
use fathom_report::Report;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// The agents a command tests with: the server and clients it names (or an in-process agent),
/// and the lab they live in.
pub struct Testbed {
    topo: Topology,
    lab: Option<fathom_lab::Lab>,
    opts: RunOptions,
    interrupted: Arc<AtomicBool>,
    /// A files root made for this testbed's in-process agent, removed with it.
    scratch: Option<std::path::PathBuf>,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Testbed {
    /// Finds (or starts) the agents `c` names.
    pub fn new(c: &CommonArgs, ipv6: Option<bool>) -> Result<Testbed, Failure> {
        Testbed::with_files_root(c, ipv6, None)
    }

    /// As [`Testbed::new`]; an in-process agent serves file copies below `files_root`.
    pub fn with_files_root(
        c: &CommonArgs,
        ipv6: Option<bool>,
        files_root: Option<std::path::PathBuf>,
    ) -> Result<Testbed, Failure> {
        let key = c.key_file.as_deref().map(read_key).transpose()?;
        let (topo, lab) = topology(c, ipv6, files_root)?;
        let mut bed = Testbed::on(c, topo, key);
        bed.lab = lab;
        Ok(bed)
    }

    /// A testbed on agents found already (`fathom launch`): `topo`, each agent reached with
    /// its own key, else with `key`.
    pub fn on(c: &CommonArgs, topo: Topology, key: Option<Vec<u8>>) -> Testbed {
        Testbed {
            topo,
            lab: None,
            opts: RunOptions {
                key,
                bind: c.bind,
                progress: true,
                live: None,
                barriers: None,
                start_by: None,
            },
            interrupted: interrupt_flag(),
            scratch: None,
        }
    }

    /// As [`Testbed::new`], for points like `plan`: a file copy's in-process agent serves a
    /// scratch directory of its own (under the system's temporary directory), removed with the
    /// testbed, so sweeps and studies of copies leave nothing behind.
    pub fn for_plan(c: &CommonArgs, plan: &TestPlan) -> Result<Testbed, Failure> {
        if plan.file().is_none() || c.server_name().is_some() {
            return Testbed::new(c, plan.socket.ipv6);
        }
        let dir = std::env::temp_dir().join(format!("fathom-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", dir.display())))?;
        let mut bed = Testbed::with_files_root(c, plan.socket.ipv6, Some(dir.clone()));
        if let Ok(b) = bed.as_mut() {
            b.scratch = Some(dir);
        } else {
            let _ = std::fs::remove_dir_all(&dir);
        }
        bed
    }

    /// Runs one plan into a report (which holds the error if the test failed after starting).
    pub fn run(&self, plan: TestPlan) -> Result<Report, Failure> {
        let wan_before = self
            .lab
            .as_ref()
            .and_then(|l| fathom_lab::wan_links(l).ok());
        let ipsec_before = self.lab.as_ref().and_then(|l| {
            let sas = fathom_lab::ipsec::link_status(l)?;
            Some((sas, fathom_lab::ipsec::charon_cpu_s(l)))
        });
        let mut run =
            controller::run(&self.topo, plan, &self.opts, &self.interrupted).map_err(failure)?;
        if let (Some(lab), Some(before)) = (&self.lab, wan_before) {
            run.wan = wan_record(before, fathom_lab::wan_links(lab).ok().unwrap_or_default());
        }
        if let (Some(lab), Some(before)) = (&self.lab, ipsec_before) {
            run.ipsec = Some(ipsec_record(lab, before));
        }
        let report = fathom_report::build(&run);
        match &report.error {
            Some(e) if e.contains(CC_REFUSED) => Err(failure(e.clone())),
            _ => Ok(report),
        }
    }

    /// Prints interval lines on stdout as they close in the runs to come (with each client
    /// host's line under every one when `per_host`).
    pub fn print_intervals(&mut self, per_host: bool) {
        self.opts.live = Some(per_host);
    }

    /// Profile tests run from now on meet their barriers together with every other test
    /// given `barriers` (a profile's groups).
    pub fn share_barriers(&mut self, barriers: Arc<fathom_engine::ProfileBarriers>) {
        self.opts.barriers = Some(barriers);
    }

    /// The lab the agents live in, if any.
    pub fn lab(&self) -> Option<&fathom_lab::Lab> {
        self.lab.as_ref()
    }

    /// True once the user pressed Ctrl-C.
    pub fn interrupted(&self) -> bool {
        interrupts().presses.load(Ordering::Relaxed) > 0 || self.interrupted.load(Ordering::Relaxed)
    }

    /// From now on the first Ctrl-C lets the running test finish (a sweep then stops after
    /// it, as [`interrupted`](Self::interrupted) says); a second one aborts the test.
    pub fn finish_running_test_on_interrupt(&self) {
        interrupts().gentle.store(true, Ordering::Relaxed);
    }
}

/// The IPsec links of the test's lab, with their SAs before (`before`, with the charons' CPU
/// then) and after the test.
fn ipsec_record(
    lab: &fathom_lab::Lab,
    (before, cpu_before): (fathom_lab::ipsec::IpsecStatus, Option<f64>),
) -> IpsecResult {
    let after = fathom_lab::ipsec::link_status(lab);
    let links = before.links.iter().map(|b| {
        let a = after
            .iter()
            .flat_map(|a| &a.links)
            .find(|a| a.name == b.name);
        IpsecLinkResult {
            name: b.name.clone(),
            sa_before: serde_json::to_value(b).ok(),
            sa_after: a.and_then(|a| serde_json::to_value(a).ok()),
        }
    });
    let cpu_after = fathom_lab::ipsec::charon_cpu_s(lab);
    IpsecResult {
        suite: before.suite.to_string(),
        datapath: before.datapath.name().to_string(),
        links: links.collect(),
        charon_cpu_s: cpu_before.zip(cpu_after).map(|(b, a)| (a - b).max(0.0)),
    }
}

/// The emulator links of the test's lab, with their counters before and after the test.
fn wan_record(
    before: Vec<fathom_lab::WanLinkStatus>,
    after: Vec<fathom_lab::WanLinkStatus>,
) -> Vec<WanLinkResult> {
    before
        .into_iter()
        .map(|b| {
            let a = after.iter().find(|a| a.name == b.name);
            WanLinkResult {
                counters_before: b
                    .counters
                    .as_ref()
                    .and_then(|c| serde_json::to_value(c).ok()),
                counters_after: a
                    .and_then(|a| a.counters.as_ref())
                    .and_then(|c| serde_json::to_value(c).ok()),
                forwarder_cpu_s: match (b.forwarder.cpu_s, a.map(|a| &a.forwarder)) {
                    (Some(was), Some(f)) if f.pid == b.forwarder.pid => {
                        f.cpu_s.map(|now| (now - was).max(0.0))
                    }
                    _ => None,
                },
                a_to_b: b.params.a_to_b,
                b_to_a: b.params.b_to_a,
                ends: b.ends,
                name: b.name,
            }
        })
        .collect()
}

/// The server and clients the options name, and the lab whose hosts they are (if any); lab
/// host names resolve in the lab, and are refused as ambiguous when several labs run and none
/// is picked.
fn topology(
    c: &CommonArgs,
    ipv6: Option<bool>,
    files_root: Option<std::path::PathBuf>,
) -> Result<(Topology, Option<fathom_lab::Lab>), Failure> {
    if let Some(found) = &c.discovery.found {
        return Ok((found_topology(found, ipv6)?, None));
    }
    let Some(server) = c.server_name() else {
        return Ok((
            Topology {
                server: embedded_agent(c.ipv6, files_root)?,
                clients: Vec::new(),
            },
            None,
        ));
    };
    let lab = lab(c.lab.as_deref())?;
    let resolve = |name: &str| match &lab {
        Err(several) if is_lab_host(name) => Err(Failure::Usage(format!(
            "'{name}' is a lab host, and {several}"
        ))),
        _ => Target::lab_or_resolve(name, lab.as_ref().ok().and_then(Option::as_ref), ipv6)
            .map_err(|e| Failure::Runtime(e.to_string())),
    };
    let server = resolve(server)?;
    let clients = c
        .clients
        .iter()
        .map(|n| resolve(n.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if server.netns.is_some() && clients.is_empty() {
        return Err(Failure::Usage(format!(
            "{} is a lab host, and the lab is not connected to this namespace: name the client hosts with --clients",
            server.name
        )));
    }
    let in_lab = server.netns.is_some() || clients.iter().any(|t| t.netns.is_some());
    Ok((
        Topology { server, clients },
        lab.ok().flatten().filter(|_| in_lab),
    ))
}

/// A test's failure: bad usage when an end refused the test's values (a congestion control
/// that host does not offer), else a runtime failure.
fn failure(e: impl ToString) -> Failure {
    let e = e.to_string();
    if e.contains(CC_REFUSED) {
        Failure::Usage(e)
    } else {
        Failure::Runtime(e)
    }
}

/// The agents `--agents-from` found, at their addresses, with their names and groups.
fn found_topology(
    found: &fathom_cluster::discover::select::Chosen,
    ipv6: Option<bool>,
) -> Result<Topology, Failure> {
    let target = |a: &fathom_cluster::discover::Agent| {
        Target::resolve(&a.addr, ipv6)
            .map(|t| Target {
                name: a.name.clone(),
                group: a.group.clone(),
                ..t
            })
            .map_err(|e| Failure::Runtime(format!("--agents-from: {}: {e}", a.name)))
    };
    Ok(Topology {
        server: target(&found.server)?,
        clients: found.clients.iter().map(target).collect::<Result<_, _>>()?,
    })
}

/// Several labs run and none was picked, so a lab host's name is ambiguous.
#[derive(Debug, thiserror::Error)]
#[error("several labs are running ({running}); pick one with --lab")]
struct SeveralLabs {
    /// The running labs' names, comma-separated.
    running: String,
}

/// The lab named by --lab, else the one the lab subcommands would pick (the only one
/// running); none if no lab runs; [`SeveralLabs`] when several run and none is picked.
fn lab(name: Option<&str>) -> Result<Result<Option<fathom_lab::Lab>, SeveralLabs>, Failure> {
    match name {
        Some(n) => fathom_lab::Lab::load(n)
            .map(|l| Ok(Some(l)))
            .map_err(|e| Failure::Runtime(format!("--lab {n}: {e}"))),
        None if fathom_lab::running_labs().is_empty() => Ok(Ok(None)),
        None => match fathom_lab::resolve_name(None) {
            Ok(n) => Ok(Ok(fathom_lab::Lab::load(&n).ok())),
            Err(_) => Ok(Err(SeveralLabs {
                running: fathom_lab::running_labs().join(", "),
            })),
        },
    }
}

/// True when `name` is a host of some running lab.
fn is_lab_host(name: &str) -> bool {
    fathom_lab::running_labs()
        .iter()
        .any(|l| fathom_lab::Lab::load(l).is_ok_and(|lab| lab.host(name).is_some()))
}

/// Starts an agent in this process on loopback (the embedded default), serving file copies
/// below `files_root` if given.
fn embedded_agent(ipv6: bool, files_root: Option<std::path::PathBuf>) -> Result<Target, Failure> {
    let ip = if ipv6 {
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    let cfg = AgentConfig {
        files_root,
        ..AgentConfig::default()
    };
    let agent = Agent::bind(SocketAddr::new(ip, 0), cfg)
        .map_err(|e| Failure::Runtime(format!("cannot start the in-process agent: {e}")))?;
    let addr = agent
        .local_addr()
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    agent.spawn().map_err(|e| Failure::Runtime(e.to_string()))?;
    Ok(Target {
        addr,
        name: addr.to_string(),
        embedded: true,
        netns: None,
        key: None,
        group: None,
    })
}

/// Ctrl-C as the process saw it. One handler per process: every testbed shares it.
struct Interrupts {
    /// Times Ctrl-C was pressed.
    presses: AtomicU32,
    /// Set when the running test must stop now (it still reports what it measured).
    abort: Arc<AtomicBool>,
    /// Set while a sweep runs: the first Ctrl-C lets the running test finish, the second aborts it.
    gentle: AtomicBool,
}

/// The process's Ctrl-C state, its handler installed on first use.
fn interrupts() -> &'static Interrupts {
    static STATE: OnceLock<Interrupts> = OnceLock::new();
    STATE.get_or_init(|| {
        let _ = ctrlc::set_handler(|| {
            let i = interrupts();
            let first = i.presses.fetch_add(1, Ordering::Relaxed) == 0;
            if first && i.gentle.load(Ordering::Relaxed) {
                eprintln!(
                    "\nfathom: Ctrl-C: stopping after the running test (Ctrl-C again aborts it)"
                );
            } else {
                i.abort.store(true, Ordering::Relaxed);
            }
        });
        Interrupts {
            presses: AtomicU32::new(0),
            abort: Arc::new(AtomicBool::new(false)),
            gentle: AtomicBool::new(false),
        }
    })
}

/// The flag that aborts the running test.
fn interrupt_flag() -> Arc<AtomicBool> {
    interrupts().abort.clone()
}
