//! The mesh's metric families, their label sets, and their registration: every name, type, unit
//! and help text exported lives here (docs/metrics.md describes them for users).
//!
//! Three kinds of family: pair series `{source, peer, test}` only for a source's sampled peers;
//! per-source aggregates `{source, test}` of every peer (sampled or not); and the scheduler's
//! own health `{source}` or `{source, test, outcome}`.

use crate::histogram::Weighted;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

/// The labels of a pair series: member names and the mesh file's test name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Pair {
    /// The member that ran the test.
    pub source: String,
    /// The member it tested.
    pub peer: String,
    /// The mesh file's name of the test.
    pub test: String,
}

/// The labels of a per-source aggregate.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceTest {
    /// The member that ran the tests.
    pub source: String,
    /// The mesh file's name of the test.
    pub test: String,
}

/// The labels of a per-source health series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Source {
    /// The member whose scheduler this is.
    pub source: String,
}

/// What became of a test the scheduler meant to run (label `outcome`: `run`, `skipped`,
/// `failed`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and its result was taken.
    Run,
    /// It could not get its slot (an end was busy) and was dropped, not queued.
    Skipped,
    /// It started and failed (a member down, a refusal, a timeout).
    Failed,
}

impl Outcome {
    /// Every outcome, so a test's three counters appear together from its first result.
    pub const ALL: [Outcome; 3] = [Outcome::Run, Outcome::Skipped, Outcome::Failed];

    /// Its label value.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Run => "run",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
        }
    }
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        std::fmt::Write::write_str(encoder, self.name())
    }
}

/// The labels of the tests counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Tests {
    /// The member whose scheduler this is.
    pub source: String,
    /// The mesh file's name of the test.
    pub test: String,
    /// What became of it.
    pub outcome: Outcome,
}

/// A gauge holding a float (a rate, a unix time).
pub type FloatGauge = Gauge<f64, AtomicU64>;
type Histograms<L> = Family<L, Weighted, fn() -> Weighted>;

/// Every family of the mesh, registered in one registry.
#[derive(Debug)]
pub struct Families {
    pub rr: Histograms<Pair>,
    pub source_rr: Histograms<SourceTest>,
    pub sent: Family<Pair, Counter>,
    pub received: Family<Pair, Counter>,
    pub source_sent: Family<SourceTest, Counter>,
    pub source_received: Family<SourceTest, Counter>,
    pub throughput: Family<Pair, FloatGauge>,
    pub throughput_at: Family<Pair, FloatGauge>,
    pub source_throughput: Family<SourceTest, FloatGauge>,
    pub source_throughput_at: Family<SourceTest, FloatGauge>,
    pub alert: Family<Pair, Gauge>,
    pub tests: Family<Tests, Counter>,
    pub lag: Histograms<Source>,
    pub stored: Family<Source, FloatGauge>,
    pub sampled: Family<Source, Gauge>,
}

impl Families {
    /// Empty families, registered in `reg` (names get their unit appended, counters `_total`).
    pub fn register(reg: &mut Registry) -> Families {
        let f = Families {
            rr: Family::new_with_constructor(Weighted::latency),
            source_rr: Family::new_with_constructor(Weighted::latency),
            sent: Family::default(),
            received: Family::default(),
            source_sent: Family::default(),
            source_received: Family::default(),
            throughput: Family::default(),
            throughput_at: Family::default(),
            source_throughput: Family::default(),
            source_throughput_at: Family::default(),
            alert: Family::default(),
            tests: Family::default(),
            lag: Family::new_with_constructor(Weighted::lag),
            stored: Family::default(),
            sampled: Family::default(),
        };
        f.register_pairs(reg);
        f.register_sources(reg);
        f.register_health(reg);
        f
    }

    fn register_pairs(&self, reg: &mut Registry) {
        let rate = || Unit::Other("bytes_per_second".into());
        reg.register_with_unit(
            "fathom_mesh_rr_latency",
            "Round-trip times of rr tests from source to a sampled peer",
            Unit::Seconds,
            self.rr.clone(),
        );
        reg.register(
            "fathom_mesh_datagrams_sent",
            "Datagrams UDP tests sent from source to a sampled peer",
            self.sent.clone(),
        );
        reg.register(
            "fathom_mesh_datagrams_received",
            "Datagrams of those UDP tests the peer received (loss is sent minus received)",
            self.received.clone(),
        );
        reg.register_with_unit(
            "fathom_mesh_throughput",
            "The last stream test's rate from source to a sampled peer (what the receiver read)",
            rate(),
            self.throughput.clone(),
        );
        reg.register_with_unit(
            "fathom_mesh_throughput_timestamp",
            "When that last stream test's rate was taken (unix time)",
            Unit::Seconds,
            self.throughput_at.clone(),
        );
        reg.register(
            "fathom_mesh_alert",
            "1 while the mesh holds an alert on the pair's test (its figure left its band), 0 after it cleared",
            self.alert.clone(),
        );
    }

    fn register_sources(&self, reg: &mut Registry) {
        let rate = || Unit::Other("bytes_per_second".into());
        reg.register_with_unit(
            "fathom_mesh_source_rr_latency",
            "Round-trip times of rr tests from source to every peer, sampled or not",
            Unit::Seconds,
            self.source_rr.clone(),
        );
        reg.register(
            "fathom_mesh_source_datagrams_sent",
            "Datagrams UDP tests sent from source to every peer",
            self.source_sent.clone(),
        );
        reg.register(
            "fathom_mesh_source_datagrams_received",
            "Datagrams of those UDP tests their peers received",
            self.source_received.clone(),
        );
        reg.register_with_unit(
            "fathom_mesh_source_throughput",
            "The last stream test's rate from source, to whichever peer it tested",
            rate(),
            self.source_throughput.clone(),
        );
        reg.register_with_unit(
            "fathom_mesh_source_throughput_timestamp",
            "When source's last stream test's rate was taken (unix time)",
            Unit::Seconds,
            self.source_throughput_at.clone(),
        );
    }

    fn register_health(&self, reg: &mut Registry) {
        reg.register(
            "fathom_mesh_tests",
            "Tests the scheduler of source meant to run, by outcome: run, skipped (no slot), failed",
            self.tests.clone(),
        );
        reg.register_with_unit(
            "fathom_mesh_scheduler_lag",
            "How late the scheduler started tests against their due times",
            Unit::Seconds,
            self.lag.clone(),
        );
        reg.register_with_unit(
            "fathom_mesh_last_stored_timestamp",
            "When source's last result was stored (unix time)",
            Unit::Seconds,
            self.stored.clone(),
        );
        reg.register(
            "fathom_mesh_sampled_peers",
            "How many peers of source have pair series (at most k)",
            self.sampled.clone(),
        );
    }

    /// Removes a pair's measurement series (not its alert, which lives while it is raised).
    pub fn remove_pair(&self, pair: &Pair) {
        self.rr.remove(pair);
        self.sent.remove(pair);
        self.received.remove(pair);
        self.throughput.remove(pair);
        self.throughput_at.remove(pair);
    }

    /// Removes a source's aggregate series of one test and that test's counters.
    pub fn remove_source_test(&self, l: &SourceTest) {
        self.source_rr.remove(l);
        self.source_sent.remove(l);
        self.source_received.remove(l);
        self.source_throughput.remove(l);
        self.source_throughput_at.remove(l);
        for outcome in Outcome::ALL {
            self.tests.remove(&Tests {
                source: l.source.clone(),
                test: l.test.clone(),
                outcome,
            });
        }
    }

    /// Removes a source's health series.
    pub fn remove_source(&self, l: &Source) {
        self.lag.remove(l);
        self.stored.remove(l);
        self.sampled.remove(l);
    }
}
