//! The controller: runs one test between a server agent and one or more clients (its own
//! in-process end, or client agents). It connects to every agent, checks versions and keys,
//! estimates each agent's clock offset, sets the server up, has every client open its flows,
//! starts all ends at one instant on one timeline, and collects every end's snapshots until they
//! finish. Whatever happens after the start, it returns what was measured, with the error beside
//! it, naming the host that failed.

mod control;
mod error;
mod keepalive;
mod members;
pub mod mesh;
mod progress;
mod target;

pub use error::{ControlError, Problem, TargetError};
pub use target::{Target, Topology};

use control::{ClockSync, Control};
use fathom_engine::{clock, Prepared, Side};
use fathom_proto::plan::{Direction, Limit, TestPlan};
use fathom_report::{EndData, Role, RunData};
use members::{Collector, Member};
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// How the controller runs a test.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The agents' key (lab hosts use their lab's).
    pub key: Option<Vec<u8>>,
    /// Local address for the controller's own data connections.
    pub bind: Option<IpAddr>,
    /// Show the live progress line (if stderr is a terminal).
    pub progress: bool,
    /// Print interval lines on stdout as they close: `Some(per_host)`, where `per_host` adds
    /// each client host's line under every interval of a multi-host test.
    pub live: Option<bool>,
    /// Profile tests: barriers met together with other tests of this process (a profile's
    /// groups); only an in-process connecting end can meet them.
    pub barriers: Option<Arc<fathom_engine::ProfileBarriers>>,
    /// The latest instant the test may start (a mesh test's slot: its end less the test's
    /// length); a setup that ran past it ends the test before any data moves
    /// ([`ControlError::Late`]).
    pub start_by: Option<Instant>,
}

/// The shortest default UDP timeout: scheduling noise alone can exceed a loopback round trip.
const UDP_TIMEOUT_FLOOR_NS: u64 = 2_000_000;
/// How long agents may take to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Clock probes per agent; the minimum-RTT one wins.
const PROBES: usize = 8;
/// The longest control round trip of a short path (see [`start_lead`]).
const SHORT_PATH_RTT_NS: u64 = 4_000_000;
/// The start's lead on a short path, beyond four round trips: Start's handling and the
/// agent's first snapshot, taken 5 ms before the start instant.
const SHORT_LEAD_NS: u64 = 20_000_000;

/// Runs `plan` on `topo`. `Err` only when nothing could be measured.
pub fn run(
    topo: &Topology,
    mut plan: TestPlan,
    opts: &RunOptions,
    interrupted: &AtomicBool,
) -> Result<RunData, ControlError> {
    check_fd_limit(topo, &plan)?;
    let mut server = connect(&topo.server, opts)?;
    let mut clients: Vec<Option<(Control, ClockSync)>> = Vec::new();
    for c in &topo.clients {
        let mut ctl = connect(c, opts)?;
        let sync = ctl.sync(PROBES)?;
        clients.push(Some((ctl, sync)));
    }
    let server_sync = server.sync(PROBES)?;
    let max_rtt = clients
        .iter()
        .flatten()
        .map(|(_, s)| s.rtt_ns)
        .chain([server_sync.rtt_ns])
        .max()
        .unwrap_or(0);
    if let Some(rr) = plan.kind.rr_mut().filter(|rr| rr.udp_timeout_ns == 0) {
        rr.udp_timeout_ns = (4 * max_rtt).max(UDP_TIMEOUT_FLOOR_NS);
    }
    let shares = assign(&plan, topo.clients.len().max(1));
    let ready = server.setup(&plan, topo.server.addr.ip())?;
    let plan = Arc::new(plan);

    let senders: Vec<control::Sender> = std::iter::once(server.sender())
        .chain(clients.iter().flatten().map(|(c, _)| c.sender()))
        .collect();
    let (ends, members) = keepalive::during(&senders, || {
        open_flows(
            topo,
            &plan,
            opts,
            (server, server_sync),
            clients,
            &shares,
            &ready,
        )
    })?;

    let (lead, hold) = start_lead(&plan, topo, max_rtt);
    in_time(opts.start_by, lead)?;
    // The run's wall-clock start is its start instant, t0, not the moment it was chosen: a
    // mesh reads each test's time on its members from it.
    let started_unix_s = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
        + lead as f64 / 1e9;
    let t0 = clock::now_ns() + lead;
    let total_s = match plan.limit {
        Limit::Time { duration_ns } => Some((plan.omit_ns + duration_ns) as f64 / 1e9),
        _ => None,
    };
    let run = RunData {
        plan: (*plan).clone(),
        ends,
        embedded: topo.server.embedded,
        started_unix_s,
        wan: Vec::new(),
        ipsec: None,
        error: None,
    };
    let mut collector = Collector::new(run, opts.progress, total_s, opts.live);
    for (i, m) in members.into_iter().enumerate() {
        if hold && matches!(m, Member::Local(_)) {
            collector.await_agents(t0);
        }
        collector.start(i, m, t0)?;
    }
    Ok(collector.collect(interrupted, askers_of(&plan)))
}

/// Whether a test starting `lead` ns from now starts by `start_by` (when given).
fn in_time(start_by: Option<Instant>, lead: u64) -> Result<(), ControlError> {
    let starts = Instant::now() + Duration::from_nanos(lead);
    match start_by {
        Some(by) if starts > by => Err(ControlError::Late {
            ms: starts.duration_since(by).as_millis() as u64,
        }),
        _ => Ok(()),
    }
}

/// How far ahead of now the start instant lies, and whether the controller's own end waits
/// for the agents' first snapshots before it starts. The lead lets every agent hear Start,
/// start its threads and take its first snapshot before the instant: 100 ms plus four control
/// round trips (at most 250 ms each) for many hosts or long paths. A test between this process
/// and one agent on a short path (round trip up to [`SHORT_PATH_RTT_NS`]) whose flows all go
/// one way needs less: [`SHORT_LEAD_NS`] plus the round trips. If its flows go from here, this
/// end also waits for the agent's first snapshot, which shows that the agent is counting
/// before anything sent from here can reach it (on such a path that snapshot, taken 5 ms
/// before the instant, arrives before it, so only a late agent delays the start); if they go
/// to here, this end is the receiver and is started at once, as before.
fn start_lead(plan: &TestPlan, topo: &Topology, max_rtt: u64) -> (u64, bool) {
    let forward = plan.flows_in(Direction::Forward).next().is_some();
    let reverse = plan.flows_in(Direction::Reverse).next().is_some();
    let rtts = 4 * max_rtt.min(250_000_000);
    if topo.clients.is_empty() && forward != reverse && max_rtt <= SHORT_PATH_RTT_NS {
        (SHORT_LEAD_NS + rtts, forward)
    } else {
        (100_000_000 + rtts, false)
    }
}

/// Has every client open its flows (the in-process end here), and checks that the server got
/// them all; returns every end's data and member, the server first.
fn open_flows(
    topo: &Topology,
    plan: &Arc<TestPlan>,
    opts: &RunOptions,
    (server, server_sync): (Control, ClockSync),
    mut clients: Vec<Option<(Control, ClockSync)>>,
    shares: &[Vec<u32>],
    ready: &crate::connect::ServerData,
) -> Result<(Vec<EndData>, Vec<Member>), ControlError> {
    let mut ends = vec![EndData {
        name: topo.server.name.clone(),
        group: topo.server.group.clone(),
        role: Role::Server,
        ids: plan.flows.iter().map(|f| f.id).collect(),
        clock_offset_ns: server_sync.offset_ns,
        control_rtt_ns: server_sync.rtt_ns,
        ..Default::default()
    }];
    let mut members = vec![Member::remote(server, server_sync)];
    if topo.clients.is_empty() {
        let socks = crate::connect::connect(ready, plan, &shares[0], opts.bind)?;
        let tls = crate::connect::tls_client(plan, ready.cert.clone())?;
        let end = (Side::Client, None);
        let prepared = match &opts.barriers {
            Some(b) => Prepared::sharing(plan.clone(), end, shares[0].clone(), socks, tls, b),
            None => Prepared::new(plan.clone(), end, shares[0].clone(), socks, tls),
        }
        .map_err(ControlError::Setup)?;
        ends.push(EndData {
            name: "local".into(),
            role: Role::Client,
            in_process: true,
            ids: shares[0].clone(),
            ..Default::default()
        });
        members.push(Member::local(prepared));
    }
    if opts.barriers.is_some() && !topo.clients.is_empty() {
        return Err(ControlError::Setup(std::io::Error::other(
            "barriers shared across tests need the connecting end in this process, not on \
             client agents",
        )));
    }
    for ((target, slot), ids) in topo.clients.iter().zip(clients.iter_mut()).zip(shares) {
        let (mut ctl, sync) = slot.take().expect("each client is set up once");
        let infos = ctl.join(plan, ids.clone(), ready)?;
        ends.push(EndData {
            name: target.name.clone(),
            group: target.group.clone(),
            role: Role::Client,
            ids: ids.clone(),
            info: fathom_proto::sample::EndpointInfo {
                flows: infos,
                ..Default::default()
            },
            clock_offset_ns: sync.offset_ns,
            control_rtt_ns: sync.rtt_ns,
            ..Default::default()
        });
        members.push(Member::remote(ctl, sync));
    }
    let server_flows = members[0].connected()?;
    if !server_flows
        .iter()
        .map(|f| f.id)
        .eq(plan.flows.iter().map(|f| f.id))
    {
        return Err(ControlError::FlowsMismatch(topo.server.name.clone()));
    }
    ends[0].info.flows = server_flows;
    Ok((ends, members))
}

/// Refuses, before anything opens, a test whose ends in this process need more descriptors than
/// it may open.
fn check_fd_limit(topo: &Topology, plan: &TestPlan) -> Result<(), ControlError> {
    let ends = u64::from(topo.server.embedded) + u64::from(topo.clients.is_empty());
    let flows = plan.flows.len() as u64;
    let what = match ends {
        2 => format!("{flows} flows with both ends in this process"),
        _ => format!("{flows} flows"),
    };
    let limit = crate::fdlimit::Limit::now();
    match limit.refuse(flows * ends + crate::fdlimit::SPARE, &what) {
        Some(m) if ends == 2 && limit.refuse(flows + crate::fdlimit::SPARE, "").is_none() => {
            Err(ControlError::FdLimit(format!(
                "{m}; or run the agent as a process of its own (`fathom serve`, then `fathom \
                 stream 127.0.0.1`): each end then needs half"
            )))
        }
        Some(m) if ends > 0 => Err(ControlError::FdLimit(m)),
        _ => Ok(()),
    }
}

/// The settings report of `t`'s host (`fathom doctor HOST`): the advisor's JSON as its agent
/// sent it, reached with `t`'s own key, else with `key`.
pub fn host_settings(t: &Target, key: Option<Vec<u8>>) -> Result<String, ControlError> {
    let opts = RunOptions {
        key,
        bind: None,
        progress: false,
        live: None,
        barriers: None,
        start_by: None,
    };
    connect(t, &opts)?.settings()
}

/// Opens the control connection to `t`: directly, or from inside its lab namespace.
fn connect(t: &Target, opts: &RunOptions) -> Result<Control, ControlError> {
    let key = t.key.as_deref().or(opts.key.as_deref());
    connect_within(t, key, CONNECT_TIMEOUT, control::STEP_TIMEOUT)
}

/// As [`connect`] with `key`, connecting within `connect` and awaiting each answer for at most
/// `step`.
fn connect_within(
    t: &Target,
    key: Option<&[u8]>,
    connect: Duration,
    step: Duration,
) -> Result<Control, ControlError> {
    let stream = match &t.netns {
        Some(ns) => fathom_lab::connect_in(ns, t.addr, connect).map_err(|source| {
            ControlError::UnreachableInLab {
                agent: t.name.clone(),
                addr: t.addr,
                source,
            }
        })?,
        None => std::net::TcpStream::connect_timeout(&t.addr, connect).map_err(|source| {
            ControlError::Unreachable {
                agent: t.name.clone(),
                source,
            }
        })?,
    };
    Control::open(stream, &t.name, key, step)
}

/// Splits the plan's flows over `n` clients: the same share of each direction for each.
pub fn assign(plan: &TestPlan, n: usize) -> Vec<Vec<u32>> {
    let mut shares = vec![Vec::new(); n];
    for d in [Direction::Forward, Direction::Reverse] {
        let ids: Vec<u32> = plan.flows_in(d).map(|f| f.id).collect();
        let per = ids.len().div_ceil(n).max(1);
        for (k, chunk) in ids.chunks(per).enumerate() {
            shares[k.min(n - 1)].extend_from_slice(chunk);
        }
    }
    shares
}

/// Which role leads (asks, or sends datagrams) in a test whose other side must be told to
/// finish (`None` for TCP streams, whose receivers see the end).
fn askers_of(plan: &TestPlan) -> Option<Role> {
    plan.kind.descriptor().leader_ends_test().then(|| {
        if plan.flows_in(Direction::Forward).next().is_some() {
            Role::Client
        } else {
            Role::Server
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::plan::*;

    #[test]
    fn flows_are_shared_evenly_per_direction() {
        let flows = (0..6)
            .map(|id| FlowPlan {
                id,
                dir: if id < 4 {
                    Direction::Forward
                } else {
                    Direction::Reverse
                },
            })
            .collect();
        let plan = TestPlan {
            flows,
            ..TestPlan::default()
        };
        assert_eq!(assign(&plan, 2), vec![vec![0, 1, 4], vec![2, 3, 5]]);
        assert_eq!(assign(&plan, 1), vec![vec![0, 1, 2, 3, 4, 5]]);
    }
}
