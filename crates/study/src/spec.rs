//! A study and its sweeps as data: a sweep is the test kind, its fixed options, the swept axes
//! and what to chart. The runner expands it into points (one `fathom <kind> <args> --<axis>
//! <value>...` each) with [`SweepSpec::points`]; [`SweepSpec::estimated_seconds`] sizes it
//! before it runs.

use crate::search::Search;
use crate::shape::{parse_ms, parse_size};
use fathom_proto::kind::Pattern;
use fathom_proto::plan::KindId;
use fathom_report::series::{Axis, Param, Series};

/// Setup and teardown of one run on the embedded loopback agent, in seconds (a rough figure).
pub const SETUP_SECONDS: f64 = 0.3;

/// Assumed rate for a byte-count transfer with no window/RTT bound, bits/s (deliberately low,
/// so estimates err long).
const ASSUMED_BPS: f64 = 1e9;

/// Measured time of a test given neither `-t` nor `-n`, seconds (the CLI's default).
const DEFAULT_TIME_S: f64 = 10.0;

/// What the error of a sweep's only point starts with when the sweep cannot run on this machine
/// (an `ipsec` sweep on a kernel without ESP); the reason follows.
pub const UNAVAILABLE: &str = "not available on this kernel";

/// One study: a question from a classic experiment, the sweeps that answer it and the findings.
#[derive(Clone, Copy, Debug)]
pub struct Study {
    /// Command name ("socket-buffers").
    pub name: &'static str,
    /// The question it answers.
    pub question: &'static str,
    /// The classic study it reproduces.
    pub source: &'static str,
    /// True when the runner must build a two-host lab with a WAN link (`rtt` axis).
    pub needs_lab: bool,
    /// The sweeps to run: `quick` for the CI form, `cpus` = CPUs of this machine.
    pub sweeps: fn(quick: bool, cpus: u32) -> Vec<SweepSpec>,
    /// The findings, one sentence each, from one series per sweep in the same order.
    pub findings: fn(&[Series]) -> Vec<String>,
}

/// One sweep of a study.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// Chart and table title ("Receive buffer, 1 and 10 connections").
    pub title: String,
    /// Test kind; its descriptor gives the command that runs it.
    pub kind: KindId,
    /// Options every point shares, as typed (["-t", "2s", "--omit", "0.5s"]).
    pub args: Vec<String>,
    /// Swept options, outermost first; the last varies fastest.
    pub axes: Vec<Axis>,
    /// Iterations per point.
    pub iterations: u32,
    /// The axis drawn on x.
    pub x_axis: String,
    /// The metric the chart and the finding use.
    pub metric: String,
    /// Further metrics worth a chart of their own (CPU per GB beside throughput).
    pub more_metrics: Vec<String>,
    /// When set, the last axis is searched rather than swept: its values are the steps the
    /// search may take, and the runner picks each next one ([`Search::next`]).
    pub search: Option<Search>,
    /// When set, the sweep runs across lab links that IPsec (kernel ESP) encrypts with this
    /// algorithm ("aes-256-gcm").
    pub ipsec: Option<String>,
}

impl Default for SweepSpec {
    /// One iteration of a plain stream test, its throughput charted; no axes, no search, no
    /// IPsec: studies fill in what their sweep sets.
    fn default() -> Self {
        SweepSpec {
            title: String::new(),
            kind: KindId::Stream,
            args: Vec::new(),
            axes: Vec::new(),
            iterations: 1,
            x_axis: String::new(),
            metric: fathom_report::metric::BITS_PER_SECOND.name.into(),
            more_metrics: Vec::new(),
            search: None,
            ipsec: None,
        }
    }
}

impl SweepSpec {
    /// Every combination of the axes' values, outermost axis first, the last varying fastest.
    pub fn points(&self) -> Vec<Vec<Param>> {
        self.axes.iter().fold(vec![Vec::new()], |acc, axis| {
            acc.iter()
                .flat_map(|prefix| {
                    axis.values.iter().map(move |v| {
                        let mut p = prefix.clone();
                        p.push(Param {
                            name: axis.name.clone(),
                            value: v.clone(),
                        });
                        p
                    })
                })
                .collect()
        })
    }

    /// Test time of the whole sweep in seconds: every point's measured time (warm-up included),
    /// plus [`SETUP_SECONDS`], times the iterations. A byte-count transfer is timed by its
    /// window/RTT bound when the point sets `rtt` and `rcvbuf`, else at 1 Gbit/s; a point may
    /// set its byte count itself (`bytes`, or a file copy's `size`).
    pub fn estimated_seconds(&self) -> f64 {
        let per_iteration: f64 = self
            .points()
            .iter()
            .map(|p| self.point_seconds(p) + SETUP_SECONDS)
            .sum();
        per_iteration * f64::from(self.iterations.max(1))
    }

    fn point_seconds(&self, params: &[Param]) -> f64 {
        let get = |names: &[&str]| {
            self.args
                .iter()
                .position(|a| names.contains(&a.as_str()))
                .and_then(|i| self.args.get(i + 1))
        };
        let omit = get(&["--omit"]).and_then(|v| seconds(v)).unwrap_or(0.0);
        if let Some(t) = get(&["-t", "--time"]).and_then(|v| seconds(v)) {
            return t + omit;
        }
        let param = |n: &str| {
            params
                .iter()
                .find(|p| p.name == n)
                .map(|p| p.value.as_str())
        };
        // A count of bytes: `-n`, or swept (`bytes`; a file copy's `size`). Of the stream
        // pattern's kinds, the memory-to-memory stream has `--bytes` and the copy `--size`;
        // other patterns' `--size` is a message size.
        let streamed = self.kind.descriptor().pattern == Pattern::Stream;
        let Some(bytes) = get(&["-n", "--bytes"])
            .map(String::as_str)
            .or_else(|| param("bytes"))
            .or_else(|| param("size").filter(|_| streamed))
            .and_then(parse_size)
        else {
            return DEFAULT_TIME_S + omit;
        };
        let rtt_s = param("rtt").and_then(parse_ms).unwrap_or(0.0) / 1e3;
        let window = param("rcvbuf").and_then(parse_size).unwrap_or(0) as f64;
        let bound = if rtt_s > 0.0 && window > 0.0 {
            (window * 8.0 / rtt_s).min(ASSUMED_BPS)
        } else {
            ASSUMED_BPS
        };
        bytes as f64 * 8.0 / bound + 2.0 * rtt_s
    }
}

/// A duration option's value in seconds: "10" and "10s" are seconds, "500ms" milliseconds.
fn seconds(v: &str) -> Option<f64> {
    if v.trim().ends_with(|c: char| c.is_ascii_digit()) {
        v.trim().parse::<f64>().ok()
    } else {
        parse_ms(v).map(|ms| ms / 1e3)
    }
}

/// An axis from its option name and values as typed.
pub fn axis(name: &str, values: &[&str]) -> Axis {
    Axis {
        name: name.to_string(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

/// Fixed options as owned strings.
pub fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(args_: &[&str], axes: Vec<Axis>, iterations: u32) -> SweepSpec {
        SweepSpec {
            title: "t".into(),
            kind: KindId::Stream,
            args: args(args_),
            axes,
            iterations,
            x_axis: "rcvbuf".into(),
            metric: "seconds".into(),
            ..SweepSpec::default()
        }
    }

    #[test]
    fn points_vary_the_last_axis_fastest() {
        let s = spec(
            &[],
            vec![
                axis("sndbuf", &["16K", "64K"]),
                axis("parallel", &["1", "10"]),
            ],
            1,
        );
        let flat: Vec<String> = s
            .points()
            .iter()
            .map(|p| p.iter().map(Param::to_string).collect::<Vec<_>>().join(","))
            .collect();
        assert_eq!(
            flat,
            [
                "sndbuf=16K,parallel=1",
                "sndbuf=16K,parallel=10",
                "sndbuf=64K,parallel=1",
                "sndbuf=64K,parallel=10"
            ]
        );
        assert_eq!(spec(&[], vec![], 1).points().len(), 1);
    }

    #[test]
    fn estimates_add_warm_up_setup_and_iterations() {
        let s = spec(
            &["-t", "10s", "--omit", "2s"],
            vec![axis("parallel", &["1", "10"])],
            3,
        );
        assert!((s.estimated_seconds() - 2.0 * 12.3 * 3.0).abs() < 1e-9);
        let untimed = spec(&[], vec![], 1);
        assert!((untimed.estimated_seconds() - 10.3).abs() < 1e-9);
    }

    #[test]
    fn byte_counts_are_timed_by_the_window_bound() {
        // 4M through a 64K window at 50 ms: 64 windows, 3.2 s, plus two RTTs and setup.
        let s = spec(
            &["-n", "4M"],
            vec![axis("rtt", &["50ms"]), axis("rcvbuf", &["64K"])],
            1,
        );
        assert!((s.estimated_seconds() - (3.2 + 0.1 + 0.3)).abs() < 1e-9);
    }
}
