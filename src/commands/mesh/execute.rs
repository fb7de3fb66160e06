//! Running one mesh test, on a thread of its own: wait for the start both ends agreed, run it
//! between them as fathom's multi-host tests run (the target's agent accepts; the source's
//! agent connects, or this process's own end under `serve --mesh`), and hand what it measured
//! to the mesh's loop, which gives both slots back.

use super::ends::{unix_ns, End};
use super::flags;
use crate::controller::{self, ControlError, RunOptions, Target, Topology};
use fathom_mesh::dispatch::Started;
use fathom_proto::plan::{Limit, TestPlan};
use fathom_report::{Report, RunData};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a test's slot keeps after its data for the controller to collect the ends' last
/// snapshots and close.
const TAIL_NS: u64 = 150_000_000;

/// One test to run.
pub struct Job {
    /// What the scheduler started.
    pub started: Started,
    /// The test's command (kind and flags).
    pub args: Vec<String>,
    /// The source's end.
    pub source: End,
    /// The target's end.
    pub target: End,
    /// The lab the members' names live in, if any.
    pub lab: Option<String>,
    /// Set to stop the running test (Ctrl-C, the end of `--for`).
    pub stop: Arc<AtomicBool>,
}

/// What a test measured.
pub struct Finished {
    /// What the scheduler started.
    pub started: Started,
    /// The command it stands for, as it would be typed alone.
    pub args: Vec<String>,
    /// Its report (which holds its error if it failed after starting).
    pub report: Option<Report>,
    /// Its round trips (rr, crr), as (seconds, count).
    pub round_trips: Vec<(f64, u64)>,
    /// Why nothing was measured, if so.
    pub error: Option<String>,
    /// True when its setup ran past its slot, so it was not started (not a path's fault).
    pub late: bool,
    /// When it started, Unix seconds.
    pub began_unix_s: f64,
    /// When it ended, Unix seconds.
    pub ended_unix_s: f64,
}

/// Runs `job`.
pub fn run(job: Job) -> Finished {
    let start = job.started.start_ns;
    let now = unix_ns();
    if start > now {
        std::thread::sleep(Duration::from_nanos(start - now));
    }
    let began_unix_s = unix_ns() as f64 / 1e9;
    let args = alone(&job);
    let plan = flags::parse(&job.args).map(|(_, p)| p);
    let length_s = plan.as_ref().map_or(0.0, |p| length_ns(p) as f64 / 1e9);
    let measured = plan.map_err(Missed::Failed).and_then(|p| measure(&job, p));
    let ended_unix_s = unix_ns() as f64 / 1e9;
    let late = matches!(measured, Err(Missed::Late(_)));
    let (report, round_trips, error) = match measured {
        Ok(run) => (
            Some(fathom_report::build(&run)),
            fathom_report::round_trips(&run),
            None,
        ),
        Err(Missed::Late(e) | Missed::Failed(e)) => (None, Vec::new(), Some(e)),
    };
    // A test that ran is on its members from its start instant for its length (the rest of
    // its time, the setup before and the collection after, moves no data).
    let (began_unix_s, ended_unix_s) = match &report {
        Some(r) => {
            let t0 = r.test.started_unix_s;
            (t0, t0 + length_s.max(r.summary.seconds))
        }
        None => (began_unix_s, ended_unix_s),
    };
    Finished {
        started: job.started,
        args,
        report,
        round_trips,
        error,
        late,
        began_unix_s,
        ended_unix_s,
    }
}

/// Why a test measured nothing.
enum Missed {
    /// Its setup ran past its slot.
    Late(String),
    /// It failed.
    Failed(String),
}

/// `plan` between the job's two ends, started early enough in its slot that its data and the
/// collection after it ([`TAIL_NS`]) end inside it.
fn measure(job: &Job, plan: TestPlan) -> Result<RunData, Missed> {
    let End::Remote(server, key) = &job.target else {
        return Err(Missed::Failed(
            "a mesh test's target is another member's agent".into(),
        ));
    };
    let s = &job.started;
    let latest = (s.start_ns + s.due.hold_ns).saturating_sub(length_ns(&plan) + TAIL_NS);
    let start_by = Instant::now() + Duration::from_nanos(latest.saturating_sub(unix_ns()));
    let clients = match &job.source {
        End::Remote(t, _) => vec![t.clone()],
        End::Local(_) => Vec::new(),
    };
    let topo = Topology {
        server: server.clone(),
        clients,
    };
    let opts = RunOptions {
        key: key.clone(),
        bind: None,
        progress: false,
        live: None,
        barriers: None,
        start_by: Some(start_by),
    };
    controller::run(&topo, plan, &opts, &job.stop).map_err(|e| match e {
        ControlError::Late { .. } => Missed::Late(e.to_string()),
        e => Missed::Failed(e.to_string()),
    })
}

/// A test's length: its warm-up and measured time (a mesh's tests are timed).
fn length_ns(plan: &TestPlan) -> u64 {
    match plan.limit {
        Limit::Time { duration_ns } => plan.omit_ns.saturating_add(duration_ns),
        _ => 0,
    }
}

/// The command `job` stands for, as it would be typed alone: lab hosts by name with `--lab`,
/// other agents by address.
fn alone(job: &Job) -> Vec<String> {
    let spec = |t: &Target| match &t.netns {
        Some(_) => t.name.clone(),
        None => t.addr.to_string(),
    };
    let mut out = job.args.clone();
    let mut in_lab = false;
    for (flag, end) in [("--server", &job.target), ("--clients", &job.source)] {
        if let End::Remote(t, _) = end {
            out.extend([flag.to_string(), spec(t)]);
            in_lab |= t.netns.is_some();
        }
    }
    if let Some(lab) = job.lab.as_ref().filter(|_| in_lab) {
        out.extend(["--lab".to_string(), lab.clone()]);
    }
    out
}
