//! The schedule: which pair runs which test when. Every (test, source, target) of the ring,
//! and every (test, source) of a rotation, is a job with a fixed phase in its period (from a
//! hash of the seed, the test and the pair, so every host computes the same one) plus a fresh
//! jitter per instance, so starts spread over the period instead of arriving in a herd. An
//! instance that cannot get its slot retries when the conflicting slot ends, as long as that
//! is within its slip, and is then skipped and counted: a job holds at most one instance, so
//! nothing queues without bound. Times are ns on the caller's clock (unix time for real
//! meshes, so that independent agents agree on phases and rotation rounds; virtual time in a
//! simulation).

use crate::class::Class;
use crate::hash::{below, hash_of, mix};
use crate::ring::Ring;
use crate::rotation;
use crate::spec::{Targets, TestSpec};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Longest extra wait before a retry, so that instances waiting for one slot do not all ask
/// again at its deadline.
const RETRY_SPREAD_NS: u64 = 50_000_000;
/// How long to wait before asking again when no deadline was given (a full slot table).
const RETRY_BLIND_NS: u64 = 100_000_000;

/// One instance of a job, due now: what to book and run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    /// The job's place in the schedule (stale once the members change).
    job: (usize, u64),
    /// The test's index in the mesh.
    pub test: usize,
    /// Which instance of the job this is (rotation round for a rotating test).
    pub instance: u64,
    /// When it was due (phase, period and jitter), ns.
    pub due_ns: u64,
    /// The latest it may start (its due time and slip), ns.
    pub latest_ns: u64,
    /// The member that runs the test's connecting end.
    pub source: String,
    /// The member it tests.
    pub target: String,
    /// Its class.
    pub class: Class,
    /// How long its slot lasts, ns.
    pub hold_ns: u64,
}

/// What became of a busy instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It will be offered again at this instant, within its slip.
    Retry(u64),
    /// Its slip ran out: skipped and counted.
    Skipped,
}

/// One test's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Instances that got their slots and started.
    pub started: u64,
    /// Instances skipped for want of a slot within their slip.
    pub skipped: u64,
    /// Instances not tried because a member was down.
    pub down: u64,
    /// Times an instance was offered again after a busy answer.
    pub retried: u64,
    /// Sum of start lags (start − due), ns.
    pub lag_total_ns: u64,
    /// Largest start lag, ns.
    pub lag_max_ns: u64,
}

/// A job: a pair (or a rotating source) and a test.
#[derive(Clone, Debug)]
struct Job {
    test: usize,
    source: String,
    /// The fixed target of a ring job; none for a rotation.
    target: Option<String>,
    /// The hash of its coordinates: its phase and jitters.
    key: u64,
    phase: u64,
    /// The instance handed out or waiting.
    instance: u64,
    /// Its due time.
    due: u64,
    /// When it is offered next; `u64::MAX` while handed out.
    wake: u64,
}

/// The schedule of one mesh (or of one member's share of it).
pub struct Scheduler {
    seed: u64,
    peers: usize,
    tests: Vec<TestSpec>,
    only: Option<String>,
    order: Vec<String>,
    jobs: Vec<Job>,
    generation: u64,
    heap: BinaryHeap<Reverse<(u64, usize, u64)>>,
    counts: Vec<Counts>,
}

impl Scheduler {
    /// The schedule of `tests` among `members` from `now`: every member's jobs, or only those
    /// `only` is the source of (an agent running its own share).
    pub fn new(
        seed: u64,
        peers: usize,
        tests: Vec<TestSpec>,
        members: &[String],
        only: Option<String>,
        now: u64,
    ) -> Scheduler {
        let counts = vec![Counts::default(); tests.len()];
        let mut s = Scheduler {
            seed,
            peers,
            tests,
            only,
            order: Vec::new(),
            jobs: Vec::new(),
            generation: 0,
            heap: BinaryHeap::new(),
            counts,
        };
        s.set_members(members, now);
        s
    }

    /// The members changed: the jobs are made again from `now` (phases are fixed by the pair,
    /// so a pair that stays keeps its rhythm); instances handed out before are stale.
    pub fn set_members(&mut self, members: &[String], now: u64) {
        let ring = Ring::new(members.iter().map(String::as_str));
        self.order = ring.order().to_vec();
        self.generation += 1;
        self.jobs.clear();
        self.heap.clear();
        for (t, spec) in self.tests.iter().enumerate() {
            for source in &self.order {
                if self.only.as_ref().is_some_and(|o| o != source) {
                    continue;
                }
                let targets: Vec<Option<String>> = match spec.targets {
                    Targets::Ring => ring
                        .peers(source, self.peers)
                        .into_iter()
                        .map(|p| Some(p.to_string()))
                        .collect(),
                    Targets::Rotate => vec![None],
                };
                for target in targets {
                    let coords = [spec.name.as_str(), source, target.as_deref().unwrap_or("")];
                    let key = hash_of(self.seed, &coords);
                    self.jobs.push(Job {
                        test: t,
                        source: source.clone(),
                        target,
                        key,
                        phase: below(key, spec.every_ns),
                        instance: 0,
                        due: 0,
                        wake: 0,
                    });
                }
            }
        }
        for j in 0..self.jobs.len() {
            let job = &self.jobs[j];
            let every = self.tests[job.test].every_ns;
            let first = now.saturating_sub(job.phase).div_ceil(every);
            self.plan(j, first);
        }
    }

    /// The members in ring order.
    pub fn members(&self) -> &[String] {
        &self.order
    }

    /// The tests scheduled.
    pub fn tests(&self) -> &[TestSpec] {
        &self.tests
    }

    /// How many jobs the schedule holds.
    pub fn jobs(&self) -> usize {
        self.jobs.len()
    }

    /// When the next instance falls due, if any.
    pub fn next_wake(&mut self) -> Option<u64> {
        while let Some(Reverse((wake, j, g))) = self.heap.peek().copied() {
            if g == self.generation && self.jobs[j].wake == wake {
                return Some(wake);
            }
            self.heap.pop();
        }
        None
    }

    /// The instances due at `now`, handed out: each must come back through
    /// [`started`](Self::started), [`busy`](Self::busy) or [`down`](Self::down).
    pub fn poll(&mut self, now: u64) -> Vec<Due> {
        let mut out = Vec::new();
        while let Some(wake) = self.next_wake().filter(|w| *w <= now) {
            let Some(Reverse((_, j, _))) = self.heap.pop() else {
                break;
            };
            let job = &mut self.jobs[j];
            job.wake = u64::MAX;
            let spec = &self.tests[job.test];
            let target = match &job.target {
                Some(t) => Some(t.as_str()),
                None => rotation::target(&self.order, &job.source, job.instance),
            };
            let Some(target) = target.map(String::from) else {
                let next = job.instance + 1;
                self.plan(j, next);
                continue;
            };
            debug_assert!(wake >= job.due);
            out.push(Due {
                job: (j, self.generation),
                test: job.test,
                instance: job.instance,
                due_ns: job.due,
                latest_ns: job.due.saturating_add(spec.slip_ns),
                source: job.source.clone(),
                target,
                class: spec.class,
                hold_ns: spec.hold_ns,
            });
        }
        out
    }

    /// `due` got both its slots and starts at `start`.
    pub fn started(&mut self, due: &Due, start: u64) {
        let c = &mut self.counts[due.test];
        c.started += 1;
        let lag = start.saturating_sub(due.due_ns);
        c.lag_total_ns = c.lag_total_ns.saturating_add(lag);
        c.lag_max_ns = c.lag_max_ns.max(lag);
        self.next(due);
    }

    /// `due` could not get its slots at `now`; both ends might be free from `until` if known.
    pub fn busy(&mut self, due: &Due, until: Option<u64>, now: u64) -> Verdict {
        let spread = below(mix(due.due_ns ^ now ^ self.seed), RETRY_SPREAD_NS);
        let at = until.map_or(now + RETRY_BLIND_NS, |u| u.max(now)) + spread;
        if at <= due.latest_ns && self.current(due) {
            self.counts[due.test].retried += 1;
            self.jobs[due.job.0].wake = at;
            self.heap.push(Reverse((at, due.job.0, self.generation)));
            return Verdict::Retry(at);
        }
        self.counts[due.test].skipped += 1;
        self.next(due);
        Verdict::Skipped
    }

    /// `due` was not tried: one of its members is down.
    pub fn down(&mut self, due: &Due) {
        self.counts[due.test].down += 1;
        self.next(due);
    }

    /// Each test's counts, in the mesh's order.
    pub fn counts(&self) -> &[Counts] {
        &self.counts
    }

    /// True while `due` belongs to the current members' schedule.
    fn current(&self, due: &Due) -> bool {
        due.job.1 == self.generation
    }

    /// Plans the instance after `due`'s, unless the members changed since.
    fn next(&mut self, due: &Due) {
        if self.current(due) {
            self.plan(due.job.0, due.instance + 1);
        }
    }

    /// Plans instance `instance` of job `j`.
    fn plan(&mut self, j: usize, instance: u64) {
        let job = &mut self.jobs[j];
        let spec = &self.tests[job.test];
        let jitter = below(mix(job.key ^ mix(instance)), spec.jitter_ns + 1);
        job.instance = instance;
        job.due = job
            .phase
            .saturating_add(instance.saturating_mul(spec.every_ns))
            .saturating_add(jitter);
        job.wake = job.due;
        self.heap.push(Reverse((job.wake, j, self.generation)));
    }
}
