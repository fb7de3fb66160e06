//! A mesh's loop, for `fathom mesh run` (every member's tests, from here) and `fathom serve
//! --mesh` (this agent's share): each turn books the instances due at both ends
//! ([`fathom_mesh::dispatch::turn`]), starts each agreed test on a thread of its own, and
//! records what the finished ones measured; it sleeps until the next instance, probe or
//! result. Members found by discovery are looked at again every `refresh`.

use super::ends::{unix_ns, NetEnds};
use super::execute::{self, Finished, Job};
use super::members::Roster;
use super::record::Ledger;
use crate::agent::MeshShare;
use crate::controller::mesh::Links;
use crate::Failure;
use fathom_mesh::dispatch::Ends;
use fathom_mesh::dispatch::{turn, Changes, Started};
use fathom_mesh::health::Health;
use fathom_mesh::ring::Ring;
use fathom_mesh::schedule::{Counts, Scheduler};
use fathom_mesh::sink::{Outcome, Sink};
use fathom_mesh::spec::{Members, Mesh};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Most tests one mesh process runs at once; an instance agreed beyond it is skipped.
const MAX_RUNNING: usize = 256;
/// The longest the loop sleeps (it looks at the stop flag and the deadline between sleeps).
const MAX_SLEEP: Duration = Duration::from_millis(200);

/// What a mesh runs with.
pub struct Setup {
    /// The mesh.
    pub mesh: Mesh,
    /// The key for agents without their own.
    pub key: Option<Vec<u8>>,
    /// Under `serve --mesh`: this agent's member name and its slot table; only its tests run.
    pub local: Option<(String, Arc<MeshShare>)>,
    /// Where results go.
    pub ledger: Ledger,
    /// Where metrics go.
    pub sink: Arc<dyn Sink>,
    /// Set to stop (Ctrl-C).
    pub stop: Arc<AtomicBool>,
    /// Each test's counts, kept up to date for whoever reads the status.
    pub counts: Arc<Mutex<Vec<Counts>>>,
}

/// A running mesh.
pub struct Runner {
    setup: Setup,
    sched: Scheduler,
    health: Health,
    ends: NetEnds,
    results: (mpsc::Sender<Finished>, mpsc::Receiver<Finished>),
    running: usize,
    /// Per test, instances whose setup ran past their slot (counted as skipped, not started).
    late: Vec<u64>,
    next_look: Option<Instant>,
    /// A look at the discovery source under way on a thread of its own: the loop goes on
    /// meanwhile (an API server that answers slowly never holds up the tests).
    looking: Option<mpsc::Receiver<Result<Roster, Failure>>>,
}

impl Runner {
    /// The mesh of `setup`, its members as they are now.
    pub fn new(setup: Setup) -> Result<Runner, Failure> {
        let only = setup.local.as_ref().map(|(n, _)| n.clone());
        let roster = first_roster(&setup.mesh, only.as_deref())?;
        let names = roster.names();
        let m = &setup.mesh;
        let sched = Scheduler::new(m.seed, m.peers, m.tests.clone(), &names, only, unix_ns());
        let ends = NetEnds {
            roster,
            key: setup.key.clone(),
            local: setup.local.clone(),
            tests: m.tests.iter().map(|t| t.name.clone()).collect(),
            links: Links::new(setup.key.clone()),
        };
        let r = Runner {
            sched,
            health: Health::new(),
            ends,
            results: mpsc::channel(),
            running: 0,
            late: vec![0; m.tests.len()],
            next_look: refresh(&setup.mesh).map(|d| Instant::now() + d),
            looking: None,
            setup,
        };
        r.tell_peers();
        Ok(r)
    }

    /// Runs until `until` (or the stop flag), then waits for the tests still running.
    pub fn run(&mut self, until: Option<Instant>) -> Result<(), Failure> {
        while !self.setup.stop.load(Ordering::Relaxed) && until.is_none_or(|u| Instant::now() < u) {
            self.look_again();
            let now = unix_ns();
            let (started, changes) = turn(&mut self.sched, &mut self.health, &mut self.ends, now);
            self.changes(changes, now);
            for s in started {
                self.start(s);
            }
            self.publish();
            let wake = [self.sched.next_wake(), self.health.next_probe()]
                .into_iter()
                .flatten()
                .min()
                .map_or(MAX_SLEEP, |w| {
                    Duration::from_nanos(w.saturating_sub(unix_ns()))
                });
            self.collect(wake.clamp(Duration::from_millis(1), MAX_SLEEP))?;
        }
        let longest = self
            .setup
            .mesh
            .tests
            .iter()
            .map(|t| t.hold_ns)
            .max()
            .unwrap_or(0);
        let give_up = Instant::now() + Duration::from_nanos(longest) + Duration::from_secs(10);
        while self.running > 0 && Instant::now() < give_up {
            self.collect(MAX_SLEEP)?;
        }
        self.publish();
        self.ends.links.close();
        Ok(())
    }

    /// Publishes each test's counts, a late start counted as skipped rather than started.
    fn publish(&self) {
        let counts = self
            .sched
            .counts()
            .iter()
            .zip(&self.late)
            .map(|(c, &late)| Counts {
                started: c.started.saturating_sub(late),
                skipped: c.skipped + late,
                ..c.clone()
            });
        *self.setup.counts.lock().unwrap_or_else(|p| p.into_inner()) = counts.collect();
    }

    /// Records what a turn saw: members down and up, instances skipped or not tried.
    fn changes(&mut self, c: Changes, now: u64) {
        let at = now as f64 / 1e9;
        let mut told = BTreeSet::new();
        for (m, why) in &c.down {
            if told.insert(m.as_str()) {
                self.setup.ledger.member(m, Some(why), at);
            }
        }
        for m in &c.up {
            self.setup.ledger.member(m, None, at);
        }
        let sink = &self.setup.sink;
        for (dues, outcome) in [
            (&c.skipped, Outcome::Skipped),
            (&c.not_tried, Outcome::Failed),
        ] {
            for d in dues {
                let test = &self.setup.mesh.tests[d.test].name;
                sink.outcome(&d.source, test, outcome);
            }
        }
    }

    /// Starts an agreed instance on a thread of its own.
    fn start(&mut self, s: Started) {
        let spec = &self.setup.mesh.tests[s.due.test];
        let ends = (self.ends.end(&s.due.source), self.ends.end(&s.due.target));
        let (Ok(source), Ok(target)) = ends else {
            return self.drop_started(&s, Outcome::Failed);
        };
        if self.running >= MAX_RUNNING {
            return self.drop_started(&s, Outcome::Skipped);
        }
        let lag = s.start_ns.saturating_sub(s.due.due_ns) as f64 / 1e9;
        self.setup.sink.scheduler_lag(&s.due.source, lag);
        let started = s.clone();
        let job = Job {
            started: s,
            args: spec.args.clone(),
            source,
            target,
            lab: self.setup.mesh.lab.clone(),
            stop: self.setup.stop.clone(),
        };
        let tx = self.results.0.clone();
        let spawned = std::thread::Builder::new()
            .name("fathom-mesh-test".into())
            .spawn(move || drop(tx.send(execute::run(job))));
        match spawned {
            Ok(_) => self.running += 1,
            Err(e) => {
                eprintln!("fathom mesh: cannot start a test's thread: {e}");
                self.drop_started(&started, Outcome::Failed);
            }
        }
    }

    /// Gives back an agreed instance's slots without running it, counted as `outcome`.
    fn drop_started(&mut self, s: &Started, outcome: Outcome) {
        self.ends.release(&s.due.source, s.source_slot);
        self.ends.release(&s.due.target, s.target_slot);
        let test = &self.setup.mesh.tests[s.due.test].name;
        self.setup.sink.outcome(&s.due.source, test, outcome);
    }

    /// Records finished tests, waiting up to `wait` for the first.
    fn collect(&mut self, wait: Duration) -> Result<(), Failure> {
        let mut next = self.results.1.recv_timeout(wait).ok();
        while let Some(f) = next {
            self.running = self.running.saturating_sub(1);
            let s = &f.started;
            self.ends.release(&s.due.source, s.source_slot);
            self.ends.release(&s.due.target, s.target_slot);
            if f.late {
                self.late[f.started.due.test] += 1;
            }
            // A test cut short by Ctrl-C says nothing about its path.
            let interrupted = self.setup.stop.load(Ordering::Relaxed)
                && (f.error.is_some() || f.report.as_ref().is_some_and(|r| r.error.is_some()));
            if !interrupted {
                self.setup.ledger.record(f)?;
            }
            next = self.results.1.try_recv().ok();
        }
        Ok(())
    }

    /// Looks at a discovery source again when its refresh is due, on a thread of its own; new
    /// members join the schedule (each pair keeps its phase), departed ones leave it.
    fn look_again(&mut self) {
        if let Some(rx) = &self.looking {
            match rx.try_recv() {
                Ok(found) => {
                    self.looking = None;
                    self.found(found);
                }
                Err(mpsc::TryRecvError::Empty) => {}
                Err(mpsc::TryRecvError::Disconnected) => self.looking = None,
            }
            return;
        }
        let Some(at) = self.next_look.filter(|at| Instant::now() >= *at) else {
            return;
        };
        self.next_look = refresh(&self.setup.mesh).map(|d| at + d);
        let (tx, rx) = mpsc::channel();
        let mesh = self.setup.mesh.clone();
        let spawned = std::thread::Builder::new()
            .name("fathom-mesh-look".into())
            .spawn(move || drop(tx.send(Roster::of(&mesh))));
        match spawned {
            Ok(_) => self.looking = Some(rx),
            Err(e) => eprintln!("fathom mesh: cannot look at the members again: {e}"),
        }
    }

    /// What a look found: the members, if they changed.
    fn found(&mut self, found: Result<Roster, Failure>) {
        match found {
            Ok(roster) if roster.names() != self.ends.roster.names() => {
                let names = roster.names();
                eprintln!("fathom mesh: members now: {}", names.join(", "));
                self.ends.roster = roster;
                self.sched.set_members(&names, unix_ns());
                self.health.retain(&names);
                self.tell_peers();
            }
            Ok(_) => {}
            Err(e) => eprintln!("fathom mesh: {}; keeping the members found before", say(&e)),
        }
    }

    /// Tells the sink the members (a departed one's series go) and each source's latency
    /// peers (the pair series metrics keep).
    fn tell_peers(&self) {
        let members = self.sched.members();
        self.setup.sink.members(members);
        let ring = Ring::new(members.iter().map(String::as_str));
        let me = self.setup.local.as_ref().map(|(n, _)| n);
        for m in members.iter().filter(|m| me.is_none_or(|me| me == *m)) {
            let peers: Vec<String> = ring
                .peers(m, self.setup.mesh.peers)
                .into_iter()
                .map(String::from)
                .collect();
            self.setup.sink.set_peers(m, &peers);
        }
    }
}

/// The members at the start. A listed mesh must hold `me` (this agent's member name). From a
/// discovery source an agent may not be listed yet (a pod is in its Service's endpoints only
/// once it is ready, which it becomes by serving) and the source may not answer yet: the
/// agent then starts with the members it has and looks again every `refresh`.
fn first_roster(mesh: &Mesh, me: Option<&str>) -> Result<Roster, Failure> {
    let found = matches!(mesh.members, Members::Found { .. });
    let roster = match Roster::of(mesh) {
        Err(e) if found && me.is_some() => {
            eprintln!("fathom mesh: {}; looking again every refresh", say(&e));
            Roster::default()
        }
        r => r?,
    };
    let names = roster.names();
    match me.filter(|me| !names.iter().any(|n| n == me)) {
        Some(me) if found => eprintln!(
            "fathom mesh: {me} is not among the members found yet ({}); it joins when it is",
            names.join(", ")
        ),
        Some(me) => {
            return Err(Failure::Usage(format!(
                "--mesh-as {me}: not a member of mesh {} (members: {})",
                mesh.name,
                names.join(", ")
            )))
        }
        None => {}
    }
    Ok(roster)
}

/// How often the mesh's members are looked at again (discovery only).
fn refresh(mesh: &Mesh) -> Option<Duration> {
    match &mesh.members {
        Members::Found { refresh_ns, .. } => Some(Duration::from_nanos(*refresh_ns)),
        Members::Listed(_) => None,
    }
}

/// A failure's message, for a line that carries on.
pub fn say(f: &Failure) -> String {
    match f {
        Failure::Usage(m) | Failure::Runtime(m) => m.clone(),
        Failure::Reported => "failed".into(),
    }
}
