//! Synthetic series for the findings tests: a table of option values and metric means becomes
#![allow(dead_code)] // each test binary uses a subset of these helpers
//! the `Series` a sweep would have produced.

use fathom_report::series::{Axis, MetricStat, Param, Point, Series};
use fathom_report::stats::describe;
use fathom_study::SweepSpec;

/// A gigabit per second, bits/s.
pub const G: f64 = 1e9;

/// What study `study` finds in `s`.
pub fn findings(study: &str, s: &[Series]) -> Vec<String> {
    (fathom_study::find(study).expect("study exists").findings)(s)
}

/// A series over `axes` (name, values) sharing the options `args`, with no points yet.
pub fn series(args: &[&str], axes: &[(&str, &[&str])]) -> Series {
    Series {
        kind: "stream".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        axes: axes
            .iter()
            .map(|(name, values)| Axis {
                name: name.to_string(),
                values: values.iter().map(|v| v.to_string()).collect(),
            })
            .collect(),
        iterations: 1,
        ..Series::default()
    }
}

/// Adds a point: `params` are the axes' values in axis order, `metrics` each metric's mean.
pub fn add(s: &mut Series, params: &[&str], metrics: &[(&str, f64)]) {
    let point = Point {
        params: s
            .axes
            .iter()
            .zip(params)
            .map(|(a, v)| Param {
                name: a.name.clone(),
                value: v.to_string(),
            })
            .collect(),
        metrics: metrics
            .iter()
            .map(|(name, v)| MetricStat {
                name: name.to_string(),
                stat: describe(&[*v], 0.95),
            })
            .collect(),
        ..Point::default()
    };
    s.points.push(point);
}

/// Adds a point that failed.
pub fn fail(s: &mut Series, params: &[&str]) {
    add(s, params, &[]);
    if let Some(p) = s.points.last_mut() {
        p.error = Some("connection refused".into());
    }
}

/// Adds a curve: one point per value of `values` at `fixed` (values of the other axes, with
/// `"*"` where the curve's axis goes), each with `metric` = the matching `ys`.
pub fn add_curve(s: &mut Series, fixed: &[&str], values: &[&str], metric: &str, ys: &[f64]) {
    for (v, y) in values.iter().zip(ys) {
        let params: Vec<&str> = fixed
            .iter()
            .map(|f| if *f == "*" { *v } else { *f })
            .collect();
        add(s, &params, &[(metric, *y)]);
    }
}

/// The series a spec would produce with every metric equal to `value` at every point.
pub fn flat(spec: &SweepSpec, value: f64) -> Series {
    let axes: Vec<(&str, Vec<&str>)> = spec
        .axes
        .iter()
        .map(|a| {
            (
                a.name.as_str(),
                a.values.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let axes: Vec<(&str, &[&str])> = axes.iter().map(|(n, v)| (*n, v.as_slice())).collect();
    let args: Vec<&str> = spec.args.iter().map(String::as_str).collect();
    let mut s = series(&args, &axes);
    for p in spec.points() {
        let values: Vec<&str> = p.iter().map(|q| q.value.as_str()).collect();
        let metrics: Vec<(&str, f64)> = [
            "bits_per_second",
            "seconds",
            "transactions_per_second",
            "latency_p50_us",
            "cpu_s_per_gb",
        ]
        .iter()
        .map(|m| (*m, value))
        .collect();
        add(&mut s, &values, &metrics);
    }
    s
}

/// A streams-to-line-rate series of one mode over a 200M link: (streams, bits/s, CPU per GB,
/// client CPU %, server CPU %) at each count the search tried.
pub fn line_rate(extra: &[&str], tried: &[(&str, f64, f64, f64, f64)]) -> Series {
    let mut args = vec!["--server", "h1", "--clients", "h2", "-t", "1s"];
    args.extend(extra);
    let counts: Vec<&str> = tried.iter().map(|t| t.0).collect();
    let mut s = series(&args, &[("rate", &["200M"]), ("parallel", &counts)]);
    for (n, bps, gb, local, remote) in tried {
        add(
            &mut s,
            &["200M", n],
            &[
                ("bits_per_second", *bps),
                ("cpu_s_per_gb", *gb),
                ("cpu_local_percent", *local),
                ("cpu_remote_percent", *remote),
            ],
        );
    }
    s
}
