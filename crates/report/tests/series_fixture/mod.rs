//! Hand-built series for the plot and HTML tests: deterministic sweeps whose figures follow
//! simple formulas, so charts and tables are exact.
#![allow(dead_code)]

use fathom_report::series::{Axis, MetricStat, Param, Point, Series};
use fathom_report::stats::describe;

/// A stream sweep: buffer 16K–4M × parallel 1/10, three iterations per point; throughput
/// grows with the buffer and saturates near 9.4 Gbit/s; the last point failed.
pub fn stream_sweep() -> Series {
    let buffers = ["16K", "64K", "256K", "1M", "4M"];
    let parallel = ["1", "10"];
    let mut points = Vec::new();
    for (i, b) in buffers.iter().enumerate() {
        for (j, p) in parallel.iter().enumerate() {
            let base = 9.4e9 * (1.0 - 0.5f64.powi(i as i32 + 1 + 2 * j as i32));
            let runs = [base * 0.98, base, base * 1.02];
            let retransmits = [i as f64, 2.0 * i as f64, 3.0 * i as f64];
            let metrics: &[(&str, &[f64])] =
                &[("bits_per_second", &runs), ("retransmits", &retransmits)];
            let failed = i == buffers.len() - 1 && j == 1;
            points.push(if failed {
                Point {
                    error: Some("agent h2: connection refused".into()),
                    ..point(&[("buffer", b), ("parallel", p)], &[], None)
                }
            } else {
                point(&[("buffer", b), ("parallel", p)], metrics, None)
            });
        }
    }
    series(
        "stream",
        "bits_per_second",
        vec![axis("buffer", &buffers), axis("parallel", &parallel)],
        points,
    )
}

/// A request/response sweep: payload 4–1460 bytes × quickack on/off, with latency percentiles.
pub fn rr_sweep() -> Series {
    let sizes = ["4", "64", "512", "1460"];
    let quickack = ["on", "off"];
    let mut points = Vec::new();
    for (i, s) in sizes.iter().enumerate() {
        for (j, q) in quickack.iter().enumerate() {
            let p50 = 30.0 + 5.0 * i as f64 + 40.0 * j as f64;
            let tps = 1e6 / p50;
            points.push(point(
                &[("size", s), ("quickack", q)],
                &[
                    ("transactions_per_second", &[tps * 0.99, tps, tps * 1.01]),
                    ("latency_p50_us", &[p50 - 1.0, p50, p50 + 1.0]),
                    ("latency_p90_us", &[p50 * 1.5, p50 * 1.6, p50 * 1.7]),
                    ("latency_p99_us", &[p50 * 3.0, p50 * 3.2, p50 * 3.4]),
                ],
                None,
            ));
        }
    }
    series(
        "rr",
        "transactions_per_second",
        vec![axis("size", &sizes), axis("quickack", &quickack)],
        points,
    )
}

/// `fathom stream --iterations 5`: one point, five runs, nothing swept.
pub fn stream_iterations() -> Series {
    let runs = [9.0e9, 9.4e9, 8.8e9, 9.2e9, 9.1e9];
    let mut s = series(
        "stream",
        "bits_per_second",
        Vec::new(),
        vec![point(&[], &[("bits_per_second", &runs)], None)],
    );
    s.points[0].runs = vec![1, 2, 3, 4, 5];
    s.args = ["stream", "--iterations", "5", "--buffer", "1M"]
        .map(String::from)
        .to_vec();
    s.iterations = 5;
    s
}

fn axis(name: &str, values: &[&str]) -> Axis {
    Axis {
        name: name.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

fn point(params: &[(&str, &str)], metrics: &[(&str, &[f64])], error: Option<String>) -> Point {
    Point {
        params: params
            .iter()
            .map(|(n, v)| Param {
                name: n.to_string(),
                value: v.to_string(),
            })
            .collect(),
        runs: vec![1, 2, 3],
        values: metrics.first().map_or_else(Vec::new, |m| m.1.to_vec()),
        metrics: metrics
            .iter()
            .map(|(n, v)| MetricStat {
                name: n.to_string(),
                stat: describe(v, 0.95),
            })
            .collect(),
        error,
        target_met: None,
    }
}

fn series(kind: &str, primary: &str, axes: Vec<Axis>, points: Vec<Point>) -> Series {
    Series {
        schema_version: 1,
        document: "series".into(),
        fathom_version: "0.0.0-test".into(),
        id: Some("s1".into()),
        kind: kind.into(),
        args: vec!["-t".into(), "5".into()],
        command: Vec::new(),
        axes,
        iterations: 3,
        min_iterations: 3,
        confidence: None,
        primary_metric: primary.into(),
        points,
        started_unix_s: 1_700_000_000.0,
        complete: true,
    }
}
