//! What a simulation measured, as it ran: each member's tests in progress by class (a start
//! beside a conflicting one is counted as an overlap), the pairs each test covered, the starts
//! in each second, and each member's exclusive tests.

use super::setting::Setting;
use crate::class::Class;
use crate::schedule::{Due, Scheduler};
use std::collections::{HashMap, HashSet};

/// One test's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct TestOutcome {
    /// Its name.
    pub name: String,
    /// Its class.
    pub class: Class,
    /// Instances started.
    pub started: u64,
    /// Skipped for want of a slot within their slip.
    pub skipped: u64,
    /// Not tried: a member was down.
    pub down: u64,
    /// Offered again after a busy answer.
    pub retried: u64,
    /// Share of the ordered pairs it covered.
    pub pairs_covered: f64,
    /// Mean start lag (start − due), ms.
    pub mean_lag_ms: f64,
    /// Largest start lag, ms.
    pub max_lag_ms: f64,
}

/// A simulation's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Members.
    pub members: usize,
    /// Simulated hours.
    pub hours: f64,
    /// Per test.
    pub tests: Vec<TestOutcome>,
    /// Exclusive tests each member took part in (either end) per hour: mean and most.
    pub exclusive_per_member_hour: (f64, f64),
    /// Share of the ordered pairs any test covered.
    pub pairs_covered: f64,
    /// Tests started per second: mean, and the busiest second.
    pub starts_per_second: (f64, u32),
    /// Starts beside a conflicting test on one member (the rule says none).
    pub overlaps: u64,
    /// Tests whose source was their target (none).
    pub self_tests: u64,
    /// Probes of members down.
    pub probes: u64,
}

/// The running counts.
pub struct Tally {
    index: HashMap<String, usize>,
    active: Vec<[u32; 3]>,
    exclusive: Vec<u32>,
    pairs: Vec<HashSet<(u32, u32)>>,
    per_second: Vec<u32>,
    overlaps: u64,
    self_tests: u64,
}

impl Tally {
    /// Empty counts for `names` under `set`.
    pub fn new(set: &Setting, names: &[String]) -> Tally {
        Tally {
            index: names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect(),
            active: vec![[0; 3]; names.len()],
            exclusive: vec![0; names.len()],
            pairs: vec![HashSet::new(); set.tests.len()],
            per_second: vec![0; (set.span_ns / 1_000_000_000 + 1) as usize],
            overlaps: 0,
            self_tests: 0,
        }
    }

    /// `due` started at `now`.
    pub fn started(&mut self, due: &Due, now: u64) {
        let (s, t) = (self.index[&due.source], self.index[&due.target]);
        if s == t {
            self.self_tests += 1;
        }
        for m in [s, t] {
            let a = self.active[m];
            let conflicting = Class::ALL
                .iter()
                .zip(a)
                .any(|(c, n)| n > 0 && c.conflicts(due.class));
            self.overlaps += u64::from(conflicting);
            self.active[m][due.class as usize] += 1;
            if due.class == Class::Exclusive {
                self.exclusive[m] += 1;
            }
        }
        self.pairs[due.test].insert((s as u32, t as u32));
        if let Some(n) = self.per_second.get_mut((now / 1_000_000_000) as usize) {
            *n += 1;
        }
    }

    /// `due`'s test ended (its data moved; a vanished holder's slots are still held).
    pub fn ended(&mut self, due: &Due, _now: u64) {
        for m in [&due.source, &due.target] {
            let a = &mut self.active[self.index[m]][due.class as usize];
            *a = a.saturating_sub(1);
        }
    }

    /// The figures, with the scheduler's counts.
    pub fn finish(self, sched: &Scheduler, probes: u64, set: &Setting) -> Outcome {
        let n = set.members.max(2) as f64;
        let all_pairs = n * (n - 1.0);
        let hours = set.span_ns as f64 / 3.6e12;
        let tests = sched
            .tests()
            .iter()
            .zip(sched.counts())
            .zip(&self.pairs)
            .map(|((t, c), pairs)| TestOutcome {
                name: t.name.clone(),
                class: t.class,
                started: c.started,
                skipped: c.skipped,
                down: c.down,
                retried: c.retried,
                pairs_covered: pairs.len() as f64 / all_pairs,
                mean_lag_ms: c.lag_total_ns as f64 / c.started.max(1) as f64 / 1e6,
                max_lag_ms: c.lag_max_ns as f64 / 1e6,
            })
            .collect();
        let covered: HashSet<&(u32, u32)> = self.pairs.iter().flatten().collect();
        let busiest = self.per_second.iter().copied().max().unwrap_or(0);
        let starts: u64 = self.per_second.iter().map(|&c| u64::from(c)).sum();
        let per_hour: Vec<f64> = self
            .exclusive
            .iter()
            .map(|&e| f64::from(e) / hours)
            .collect();
        Outcome {
            members: set.members,
            hours,
            tests,
            exclusive_per_member_hour: (
                per_hour.iter().sum::<f64>() / per_hour.len().max(1) as f64,
                per_hour.iter().copied().fold(0.0, f64::max),
            ),
            pairs_covered: covered.len() as f64 / all_pairs,
            starts_per_second: (starts as f64 / self.per_second.len() as f64, busiest),
            overlaps: self.overlaps,
            self_tests: self.self_tests,
            probes,
        }
    }
}

impl Outcome {
    /// The figures as a text table.
    pub fn render(&self) -> String {
        let mut out = vec![
            format!(
                "{} members, {:.1} simulated hours",
                self.members, self.hours
            ),
            format!(
                "exclusive tests per member and hour: mean {:.2}, most {:.2}",
                self.exclusive_per_member_hour.0, self.exclusive_per_member_hour.1
            ),
            format!(
                "ordered pairs covered by any test: {:.2}%",
                self.pairs_covered * 100.0
            ),
            format!(
                "starts per second: mean {:.1}, busiest second {} ({:.2} x the mean)",
                self.starts_per_second.0,
                self.starts_per_second.1,
                f64::from(self.starts_per_second.1) / self.starts_per_second.0.max(1e-9)
            ),
            format!(
                "overlaps against the class rules: {}; self tests: {}; probes of members down: {}",
                self.overlaps, self.self_tests, self.probes
            ),
            String::new(),
            format!(
                "{:<8} {:<10} {:>10} {:>9} {:>8} {:>7} {:>9} {:>8} {:>9}",
                "test",
                "class",
                "started",
                "skipped",
                "skip %",
                "down",
                "pairs %",
                "lag ms",
                "max lag"
            ),
        ];
        for t in &self.tests {
            let tried = (t.started + t.skipped).max(1) as f64;
            out.push(format!(
                "{:<8} {:<10} {:>10} {:>9} {:>8.3} {:>7} {:>9.2} {:>8.1} {:>9.1}",
                t.name,
                t.class.name(),
                t.started,
                t.skipped,
                t.skipped as f64 / tried * 100.0,
                t.down,
                t.pairs_covered * 100.0,
                t.mean_lag_ms,
                t.max_lag_ms
            ));
        }
        out.push(String::new());
        out.join("\n")
    }
}
