//! Several runs as one result: a sweep over test options (`fathom sweep`), repeated iterations
//! (`--iterations`), or both. Each point is one combination of the swept options; its runs are
//! its iterations, and each metric is summarized over them ([`crate::stats::Stat`]). Serialized
//! as-is, this is the JSON of `fathom sweep --json` and of iterated tests (docs/output.md).

use crate::model::Report;
use crate::stats::{describe, Confidence, Stat};
use fathom_proto::plan::KindId;
use serde::{Deserialize, Serialize};

/// Version of the series JSON shape; bumped on any incompatible change.
pub const SERIES_SCHEMA_VERSION: u32 = 1;

/// A swept option and its values, in the order given.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Axis {
    /// The option's long name without dashes ("buffer", "parallel", "size").
    pub name: String,
    /// Its values as written ("16K", "on").
    pub values: Vec<String>,
}

/// As `--vary` takes it: "buffer=16K,64K".
impl std::fmt::Display for Axis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.name, self.values.join(","))
    }
}

/// One option's value at a point.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Param {
    /// The option's name, as in [`Axis::name`].
    pub name: String,
    /// Its value, as in [`Axis::values`].
    pub value: String,
}

/// As a point's option is written in labels and tables: "parallel=10".
impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

/// One metric of a point over its iterations.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MetricStat {
    /// Metric name, as [`metrics`] names it ("bits_per_second").
    pub name: String,
    /// Its statistics over the point's runs.
    #[serde(flatten)]
    pub stat: Stat,
}

/// One combination of the swept options.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Point {
    /// The swept options' values, in the axes' order.
    pub params: Vec<Param>,
    /// Store ids of its runs (iterations), in the order run.
    pub runs: Vec<i64>,
    /// The primary metric of each run, in the same order.
    pub values: Vec<f64>,
    /// Every metric over the runs.
    pub metrics: Vec<MetricStat>,
    /// Set when a run of this point failed (its figures are then left out).
    pub error: Option<String>,
    /// With a confidence target (`--confidence`): whether the main figure's interval got as
    /// narrow as asked before the most iterations ran out; `None` without a target.
    #[serde(default)]
    pub target_met: Option<bool>,
}

impl Point {
    /// The value of option `name` at this point.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.as_str())
    }

    /// The statistics of metric `name`.
    pub fn metric(&self, name: &str) -> Option<&Stat> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| &m.stat)
    }
}

/// A sweep or an iterated test.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// [`SERIES_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// "series", telling this document from a single run's.
    pub document: String,
    /// fathom's version.
    pub fathom_version: String,
    /// Store id ("s12"), when stored.
    pub id: Option<String>,
    /// Test kind ("stream", "rr", "crr").
    pub kind: String,
    /// The test options every point shares, as typed.
    pub args: Vec<String>,
    /// The whole command line as the user typed it, without the program name (`sweep stream
    /// --vary buffer=64K,1M -t 5s`, `study rr-payload --quick`); empty in series stored before
    /// it was kept.
    #[serde(default)]
    pub command: Vec<String>,
    /// The swept options, outermost first (the last varies fastest).
    pub axes: Vec<Axis>,
    /// Most iterations per point.
    pub iterations: u32,
    /// Fewest iterations per point before the confidence rule may stop early.
    pub min_iterations: u32,
    /// The early-stop rule, when given.
    pub confidence: Option<Confidence>,
    /// The metric the rule and the headline use (the kind's primary metric: "bits_per_second",
    /// "transactions_per_second").
    pub primary_metric: String,
    /// The points, in the order run.
    pub points: Vec<Point>,
    /// Wall-clock start, Unix seconds.
    pub started_unix_s: f64,
    /// True once every point has run.
    pub complete: bool,
}

impl crate::export::Document for Series {}

/// The figures of one run that a series summarizes, by name, as the metric registry reads
/// them ([`crate::metric::of_run`]).
pub fn metrics(r: &Report) -> Vec<(&'static str, f64)> {
    crate::metric::of_run(r)
}

/// The metric the series of kind `kind` (its name in results) is judged by, as its descriptor
/// says; receive throughput for a name this build does not know.
pub fn primary_metric(kind: &str) -> &'static str {
    KindId::from_name(kind).map_or(crate::metric::BITS_PER_SECOND.name, |k| {
        k.descriptor().primary_metric
    })
}

/// Every metric of `reports` summarized at confidence `level`, in [`metrics`]' order.
pub fn summarize(reports: &[&Report], level: f64) -> Vec<MetricStat> {
    let per_run: Vec<Vec<(&'static str, f64)>> = reports.iter().map(|r| metrics(r)).collect();
    let mut names: Vec<&'static str> = Vec::new();
    for run in &per_run {
        for (n, _) in run {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let values: Vec<f64> = per_run
                .iter()
                .filter_map(|run| run.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
                .collect();
            MetricStat {
                name: name.to_string(),
                stat: describe(&values, level),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarize_names_every_metric_once_and_describes_it() {
        let mut a = Report::default();
        a.summary.transfer.bits_per_second = 10.0;
        a.summary.transfer.bytes = 2_000_000_000;
        a.summary.seconds = 1.0;
        let mut b = a.clone();
        b.summary.transfer.bits_per_second = 14.0;
        let s = summarize(&[&a, &b], 0.95);
        let bps = s.iter().find(|m| m.name == "bits_per_second").unwrap();
        assert_eq!((bps.stat.n, bps.stat.mean), (2, 12.0));
        assert_eq!(s.iter().filter(|m| m.name == "bits_per_second").count(), 1);
        assert!(s.iter().all(|m| m.name != "transactions_per_second"));
    }

    #[test]
    fn cpu_per_gb_counts_each_machine_once() {
        let mut r = Report::default();
        r.summary.transfer.bytes = 2_000_000_000;
        r.summary.seconds = 1.0;
        let host = |name: &str, busy: f64| crate::model::HostResult {
            hostname: name.into(),
            cpus: 2,
            cpu: crate::model::Cpu {
                total: busy,
                ..Default::default()
            },
            ..Default::default()
        };
        // One machine (loopback): 50% of 2 CPUs for 1 s = 1 CPU-s over 2 GB.
        r.hosts = vec![host("vm", 50.0), host("vm", 50.0)];
        let per_gb = |r: &Report| {
            metrics(r)
                .into_iter()
                .find(|(n, _)| *n == "cpu_s_per_gb")
                .unwrap()
                .1
        };
        assert_eq!(per_gb(&r), 0.5);
        // Two machines: both count.
        r.hosts[1].hostname = "other".into();
        assert_eq!(per_gb(&r), 1.0);
    }

    #[test]
    fn cpu_per_gb_leaves_the_lab_emulator_out() {
        let mut r = Report::default();
        r.summary.transfer.bytes = 1_000_000_000;
        r.summary.transfer.total_bytes_received = 1_250_000_000;
        r.summary.seconds = 4.0;
        r.hosts = vec![crate::model::HostResult {
            hostname: "vm".into(),
            cpus: 2,
            cpu: crate::model::Cpu {
                total: 50.0,
                ..Default::default()
            },
            ..Default::default()
        }];
        // 4 CPU-s busy in the window, of which the forwarder's: 2.5 s over the test times the
        // window's 80% of the bytes, 2 s.
        r.wan = vec![crate::model::WanLinkResult {
            forwarder_cpu_s: Some(2.5),
            ..Default::default()
        }];
        let per_gb = |r: &Report| metrics(r).into_iter().find(|(n, _)| *n == "cpu_s_per_gb");
        assert_eq!(per_gb(&r), Some(("cpu_s_per_gb", 2.0)));
        let emulator = metrics(&r)
            .into_iter()
            .find(|(n, _)| *n == "emulator_cpu_percent");
        assert_eq!(
            emulator,
            Some(("emulator_cpu_percent", 25.0)),
            "2 of 8 CPU-s"
        );
        r.wan[0].forwarder_cpu_s = None;
        assert_eq!(per_gb(&r), Some(("cpu_s_per_gb", 4.0)));
    }

    #[test]
    fn cpu_per_gb_needs_a_window_the_cpu_clock_can_measure() {
        let mut r = Report::default();
        r.summary.transfer.bytes = 1_000_000;
        r.summary.seconds = 0.002;
        r.hosts = vec![crate::model::HostResult {
            hostname: "vm".into(),
            cpus: 2,
            ..Default::default()
        }];
        let named = |r: &Report| metrics(r).iter().any(|(n, _)| *n == "cpu_s_per_gb");
        assert!(!named(&r), "2 ms: no CPU figure, not 0");
        r.summary.seconds = 1.0;
        assert!(!named(&r), "no CPU measured: no figure");
        r.hosts[0].cpu.total = 10.0;
        assert!(named(&r));
    }
}
