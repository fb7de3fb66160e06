//! A mesh as the file describes it, once read and checked: its members (listed or found), its
//! tests with their schedules and classes, and its alert rule. Everything here is bounded.

use crate::class::Class;
use fathom_cluster::discover::Source;

/// A checked mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Its name: the store's series carry it, so two meshes can share a store.
    pub name: String,
    /// The seed of the phases, jitters and rotations (the same seed, the same schedule).
    pub seed: u64,
    /// Latency peers per member from the hash ring (k).
    pub peers: usize,
    /// Who takes part.
    pub members: Members,
    /// What they test, and how often.
    pub tests: Vec<TestSpec>,
    /// When a pair's change is an alert.
    pub alert: AlertRule,
    /// The key file the agents serve with, if any (as written in the file).
    pub key_file: Option<String>,
    /// The lab whose host names the members use, if any.
    pub lab: Option<String>,
}

/// Who takes part in a mesh.
#[derive(Clone, Debug, PartialEq)]
pub enum Members {
    /// Listed in the file.
    Listed(Vec<Member>),
    /// Found through one of fathom's discovery sources, looked at again every `refresh_ns`.
    Found {
        /// Where to look (`--agents-from`'s syntax).
        source: Source,
        /// How often to look again, ns.
        refresh_ns: u64,
    },
}

/// One member: how results name it, and where its agent is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Member {
    /// Its name in results and metrics (a host name, never only an address).
    pub name: String,
    /// Its agent: a lab host's name, HOST or HOST:PORT.
    pub addr: String,
}

/// Whom a test's source tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Targets {
    /// Its `k` peers from the hash ring, each on its own schedule.
    Ring,
    /// One target per period, rotating through the other members (a sample of the pairs each
    /// period rather than all N² of them).
    Rotate,
}

impl Targets {
    /// Whom a test of `class` tests unless the file says: a rotation for exclusive tests (a
    /// ring of them would ask each member for k exclusive slots a period), the ring else.
    pub fn of_class(class: Class) -> Targets {
        match class {
            Class::Exclusive => Targets::Rotate,
            _ => Targets::Ring,
        }
    }

    /// Its name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Targets::Ring => "ring",
            Targets::Rotate => "rotate",
        }
    }
}

/// The figure a test is judged by: a metric of its report, and which way is worse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// The metric's name as series name it (`latency_p50_us`, `bits_per_second`).
    pub metric: String,
    /// True when a larger value is worse (latency, loss).
    pub higher_is_worse: bool,
}

impl Figure {
    /// The figure a test of `kind` is judged by unless the file names one: the median round
    /// trip for request/response, the loss for UDP, the receiver's rate for the rest.
    pub fn of_kind(kind: &str) -> Figure {
        match kind {
            "rr" | "crr" => Figure::named("latency_p50_us"),
            "udp" => Figure::named("lost_percent"),
            _ => Figure::named("bits_per_second"),
        }
    }

    /// The metric `metric`, worse when higher if its name says it is a time, a loss or a count
    /// of retransmits, else worse when lower.
    pub fn named(metric: &str) -> Figure {
        let worse_up = [
            "_us",
            "_ns",
            "_seconds",
            "lost_percent",
            "retransmits",
            "jitter_us",
        ];
        Figure {
            metric: metric.to_string(),
            higher_is_worse: worse_up.iter().any(|s| metric.ends_with(s)),
        }
    }
}

/// One test of the mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSpec {
    /// Its name in the file, the store and metrics (unique in the mesh).
    pub name: String,
    /// Its kind, as the command names it (stream, rr, crr, udp, file).
    pub kind: String,
    /// The command it stands for: the kind and its flags, as they would be typed after
    /// `fathom` (without the hosts, which the mesh fills in).
    pub args: Vec<String>,
    /// How often each of its pairs runs, ns.
    pub every_ns: u64,
    /// How it shares members' time.
    pub class: Class,
    /// Whom each source tests.
    pub targets: Targets,
    /// Most random delay added to each start, ns (on top of the pair's fixed phase).
    pub jitter_ns: u64,
    /// Longest a start may slip while waiting for a slot before it is skipped, ns.
    pub slip_ns: u64,
    /// How long the slot it books lasts: its own length plus `setup`; the agents free the slot
    /// at this deadline even if the test never says it finished, ns.
    pub hold_ns: u64,
    /// What its alerts judge.
    pub figure: Figure,
}

/// Jitter unless the file says: this share of the period.
pub const DEFAULT_JITTER: f64 = 0.10;

impl TestSpec {
    /// A test of `kind` (its command is just the kind) every `every_ns`, running `length_ns`,
    /// with the defaults the file gives what it does not name: its kind's class, figure and
    /// targets, 10% jitter, a slip of half the period (at most what the jitter leaves), and a
    /// slot of its length plus `setup_ns`.
    pub fn defaults(
        name: &str,
        kind: &str,
        every_ns: u64,
        length_ns: u64,
        setup_ns: u64,
    ) -> TestSpec {
        let class = Class::of_kind(kind);
        let jitter_ns = (every_ns as f64 * DEFAULT_JITTER) as u64;
        TestSpec {
            name: name.to_string(),
            kind: kind.to_string(),
            args: vec![kind.to_string()],
            every_ns,
            class,
            targets: Targets::of_class(class),
            jitter_ns,
            slip_ns: (every_ns / 2).min(every_ns - jitter_ns),
            hold_ns: length_ns.saturating_add(setup_ns),
            figure: Figure::of_kind(kind),
        }
    }
}

/// When a pair's figure is an alert (hysteresis over consecutive runs).
#[derive(Clone, Debug, PartialEq)]
pub struct AlertRule {
    /// Consecutive runs outside the band that raise an alert (N).
    pub after: u32,
    /// Consecutive runs inside it that clear a raised alert (M).
    pub clear: u32,
    /// Runs the baseline keeps (the latest good ones).
    pub baseline: usize,
    /// Runs a pair needs in its baseline before any is judged.
    pub min_baseline: usize,
    /// The band's confidence level (a Student-t prediction interval), 0..1.
    pub level: f64,
    /// The band is at least this share of the baseline's mean on the worse side, so that a
    /// very steady baseline does not make noise an alert.
    pub tolerance: f64,
    /// A member is the likely culprit when this many of its partners (at least, and at least
    /// half of them) have an alert with it.
    pub culprit: usize,
}

impl Default for AlertRule {
    fn default() -> Self {
        AlertRule {
            after: 3,
            clear: 3,
            baseline: 30,
            min_baseline: 10,
            level: 0.99,
            tolerance: 0.10,
            culprit: 3,
        }
    }
}

/// Most members a file lists or a source may give a mesh.
pub const MAX_MEMBERS: usize = 100_000;
/// Most tests in one mesh.
pub const MAX_TESTS: usize = 64;
/// Most latency peers per member.
pub const MAX_PEERS: usize = 1000;
/// The shortest period a test may run at.
pub const MIN_EVERY_NS: u64 = 100_000_000;
/// The longest period (a day).
pub const MAX_EVERY_NS: u64 = 86_400_000_000_000;
/// The setup allowance added to a test's own length to make its slot, unless the file says.
pub const DEFAULT_SETUP_NS: u64 = 500_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_know_which_way_is_worse() {
        assert!(Figure::of_kind("rr").higher_is_worse);
        assert!(Figure::of_kind("udp").higher_is_worse);
        assert!(!Figure::of_kind("stream").higher_is_worse);
        assert!(!Figure::named("transactions_per_second").higher_is_worse);
        assert!(Figure::named("latency_p99_us").higher_is_worse);
    }
}
