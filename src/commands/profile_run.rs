//! `fathom profile run`: every group of a profile runs as one test, all groups at once, each
//! group's threads × flows as the test's flows against its remote agent (a lab host or
//! HOST[:PORT]; none: an in-process agent on loopback). Every group's connecting end runs in
//! this process, so the groups' barriers are one shared object: the k-th barrier of each group
//! opens once every flow of every group reached it. Each group's report is stored and printed
//! as any test's, then the profile's totals.

mod group;
pub mod lab;
pub mod plot;
pub mod rrul;
pub mod vary;

pub use group::GroupRun;

use super::output::{self, Format};
use crate::cli::common::{checked, CommonArgs};
use crate::cli::profile_run::ProfileRunArgs;
use crate::method::Recorder;
use crate::testbed::Testbed;
use crate::Failure;
use fathom_engine::ProfileBarriers;
use fathom_proto::bounds::{MAX_COUNT, MAX_UDP};
use fathom_proto::plan::{Direction, FlowPlan, KindPlan, Limit, SocketOptions, TestPlan};
use fathom_proto::profile::{Group, Op, ProfilePlan, Protocol};
use fathom_proto::tls::TlsOptions;
use fathom_report::Report;
use serde::Serialize;
use std::process::ExitCode;
use std::sync::Arc;

/// Largest write buffer a group's workers hold (a stream's default write size).
const WRITE_BUFFER: u32 = 1 << 20;

/// The profile's figures over all its groups.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Groups that ran.
    pub groups: usize,
    /// Groups whose test failed.
    pub failed: usize,
    /// Iterations the connecting ends completed.
    pub iterations: u64,
    /// Payload bytes the connecting ends wrote.
    pub client_sent: u64,
    /// Payload bytes the connecting ends read.
    pub client_received: u64,
    /// Payload bytes the agents wrote.
    pub server_sent: u64,
    /// Payload bytes the agents read.
    pub server_received: u64,
}

/// Interval between samples of a profile with probe groups unless `-i` says otherwise: short
/// enough that its latency under load is seen over time.
const PROBE_INTERVAL_NS: u64 = 100_000_000;

/// What `profile run --json` prints.
#[derive(Serialize)]
struct Document<'a> {
    profile: &'a str,
    groups: &'a [GroupRun],
    totals: Totals,
    /// Latency under load, for a profile with probe groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    rrul: Option<rrul::Rrul>,
}

/// Runs `plan` as `args` say and prints each group's report and the totals; exit 1 when a
/// group's test failed.
pub fn run_profile(plan: &ProfilePlan, args: &ProfileRunArgs) -> Result<ExitCode, Failure> {
    if let Some(path) = &args.plot {
        plot::format(path)?;
        if !rrul::has_probes(plan) {
            return Err(Failure::Usage(format!(
                "--plot draws latency under load, and profile {} has no probe group (a paced \
                 transaction after a barrier, as profiles/rrul.toml has)",
                plan.name
            )));
        }
    }
    let runs = profile_reports(plan, args)?;
    let totals = totals(&runs);
    let rrul = rrul::rrul(plan, &runs);
    if let Some(path) = &args.plot {
        plot::write(plan, &runs, path)?;
    }
    if args.json {
        let doc = Document {
            profile: &plan.name,
            groups: &runs,
            totals,
            rrul,
        };
        let mut text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::Runtime(format!("cannot write the profile's JSON: {e}")))?;
        text.push('\n');
        output::write_stdout(text.as_bytes());
    } else {
        for g in &runs {
            output::write_stdout(format!("group {}\n", g.group).as_bytes());
            output::print(&g.report, Format::Table);
            if let Some(e) = &g.report.error {
                output::write_stdout(format!("group {}: failed: {e}\n", g.group).as_bytes());
            }
        }
        output::write_stdout(totals_table(&plan.name, &totals).as_bytes());
        if let Some(r) = &rrul {
            output::write_stdout(rrul::table(r).as_bytes());
        }
    }
    Ok(if totals.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs every group of `plan` at once and stores each group's report; the reports in group
/// order. A profile the engine cannot run is a usage error (exit 2) before anything runs.
pub fn profile_reports(
    plan: &ProfilePlan,
    args: &ProfileRunArgs,
) -> Result<Vec<GroupRun>, Failure> {
    plan.validate()
        .map_err(|e| Failure::Usage(format!("profile {}: {e}", plan.name)))?;
    if let Some((netns, plan, args)) = lab::in_lab(plan, args)? {
        return fathom_lab::run_in(&netns, move || Ok(profile_reports(&plan, &args)))
            .map_err(|e| Failure::Runtime(format!("cannot run in {netns}: {e}")))?;
    }
    let interval = args
        .interval
        .or_else(|| rrul::has_probes(plan).then_some(PROBE_INTERVAL_NS));
    let mut tests = Vec::with_capacity(plan.groups.len());
    for g in &plan.groups {
        let common = args
            .common(g.remote.as_deref())
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let mut test = group_plan(g, interval)?;
        test.socket.cc.clone_from(&args.cc);
        tests.push((test, common));
    }
    let barriers = Arc::new(ProfileBarriers::new(
        tests
            .iter()
            .zip(&plan.groups)
            .map(|((p, _), g)| (p.flows.len() as u32, &g.program)),
    ));
    let results: Vec<Result<Report, Failure>> = std::thread::scope(|s| {
        let handles: Vec<_> = tests
            .iter()
            .map(|(p, c)| {
                let barriers = barriers.clone();
                s.spawn(move || group_run(p, c, barriers))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Failure::Runtime("a group's test panicked".into())))
            })
            .collect()
    });
    let mut runs = Vec::with_capacity(results.len());
    for (g, r) in plan.groups.iter().zip(results) {
        let report = r?;
        let mut argv = vec![
            "profile".to_string(),
            "run".into(),
            plan.name.clone(),
            format!("group={}", g.name),
        ];
        argv.extend(args.point.clone());
        Recorder::open(&args.store, &argv).save(&report, &argv, None);
        runs.push(GroupRun {
            group: g.name.clone(),
            report,
        });
    }
    Ok(runs)
}

/// Runs one group's test, its barriers met with the other groups' (`barriers`); a group
/// that cannot run, or fails, breaks them so that no other group waits for it.
fn group_run(
    plan: &TestPlan,
    common: &CommonArgs,
    barriers: Arc<ProfileBarriers>,
) -> Result<Report, Failure> {
    let result = Testbed::new(common, None).and_then(|mut bed| {
        bed.share_barriers(barriers.clone());
        bed.run(plan.clone())
    });
    if result.as_ref().map_or(true, |r| r.error.is_some()) {
        barriers.break_all();
    }
    result
}

/// The test plan of group `g`: its threads × flows as the test's flows, its program as the
/// kind's, its socket options, sampled every `interval` ns (default 1 s).
pub fn group_plan(g: &Group, interval: Option<u64>) -> Result<TestPlan, Failure> {
    let usage = |what: &str| Failure::Usage(format!("group {}: {what}", g.name));
    let flows = u64::from(g.threads) * u64::from(g.flows_per_thread);
    let flows = u32::try_from(flows).map_err(|_| usage("too many flows"))?;
    let ops = || g.program.transactions.iter().flat_map(|t| &t.ops);
    let biggest = ops()
        .filter_map(|f| match &f.op {
            Op::Write(s) | Op::Read(s) | Op::SendTo(s) | Op::Recv(s) => Some(s.max()),
            _ => None,
        })
        .max()
        .unwrap_or(1);
    let plan = TestPlan {
        kind: KindPlan::Profile(g.program.clone()),
        flows: (0..flows)
            .map(|id| FlowPlan {
                id,
                dir: Direction::Forward,
            })
            .collect(),
        // Open-ended: the test ends when every flow's program is over.
        limit: Limit::Bytes(MAX_COUNT),
        interval_ns: interval.unwrap_or(1_000_000_000),
        socket: SocketOptions {
            nodelay: g.nodelay,
            sndbuf: g.window,
            rcvbuf: g.window,
            ..SocketOptions::default()
        },
        // Larger operations go in several calls, as a stream's writes do.
        write_size: biggest.clamp(1, WRITE_BUFFER),
        // A datagram is read whole, whatever its size.
        read_size: match g.protocol {
            Protocol::Udp => MAX_UDP,
            _ => 0,
        },
        tls: (g.protocol == Protocol::Tls).then(TlsOptions::default),
        ..TestPlan::default()
    };
    checked(plan).map_err(|e| usage(&e.to_string()))
}

/// The totals of `runs`, from each group's profile figures.
pub fn totals(runs: &[GroupRun]) -> Totals {
    let mut t = Totals {
        groups: runs.len(),
        ..Totals::default()
    };
    for r in runs {
        t.failed += usize::from(r.report.error.is_some());
        if let Some(p) = r.report.summary.profile() {
            t.iterations += p.iterations;
            t.client_sent += p.client.sent;
            t.client_received += p.client.received;
            t.server_sent += p.server.sent;
            t.server_received += p.server.received;
        }
    }
    t
}

/// The totals as the table's closing lines.
fn totals_table(name: &str, t: &Totals) -> String {
    format!(
        "profile {name}: {} groups ({} failed), {} iterations\n  \
         connecting ends: sent {} B, received {} B\n  \
         agents: sent {} B, received {} B\n",
        t.groups,
        t.failed,
        t.iterations,
        t.client_sent,
        t.client_received,
        t.server_sent,
        t.server_received
    )
}
