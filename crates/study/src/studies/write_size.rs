//! write-size: how the application's write size (256 B – 2 MB) changes throughput, with one and
//! two writers (each connection has its own worker thread). The HIPPI study went from 0.32 MB/s
//! at 256 B to 77.9 MB/s at 2 MB, and forking 2 processes added 5–10% above 64 KB.

use super::shared::{iterations, knee_sentence, size_label, timing};
use crate::curve::{curve, size_x, values, Curve};
use crate::spec::{axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "write-size",
    question:
        "How does the write size (256 B - 2 MB) change throughput, with one writer and with two?",
    source: "ttcp and raw blast/sink on HIPPI (IRIX 5.2)",
    needs_lab: false,
    sweeps,
    findings,
};

const FULL: [&str; 8] = ["256", "1K", "4K", "16K", "64K", "256K", "1M", "2M"];
const QUICK: [&str; 4] = ["256", "4K", "64K", "1M"];
/// The size from which the classic study saw a second writer help.
const LARGE: f64 = 65536.0;

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    vec![SweepSpec {
        title: "Write size, 1 and 2 writers".into(),
        kind: KindId::Stream,
        args: timing(quick),
        axes: vec![
            axis("write", if quick { &QUICK } else { &FULL }),
            axis("parallel", &["1", "2"]),
        ],
        iterations: iterations(quick),
        x_axis: "write".into(),
        metric: metric::BITS_PER_SECOND.name.into(),
        more_metrics: vec![metric::CPU_S_PER_GB.name.into()],
        ..SweepSpec::default()
    }]
}

fn findings(series: &[Series]) -> Vec<String> {
    let Some(s) = series.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut curves: Vec<(String, Curve)> = Vec::new();
    for p in values(s, "parallel") {
        let c = curve(
            s,
            "write",
            metric::BITS_PER_SECOND.name,
            &[("parallel", &p)],
            size_x,
        );
        let label = say::plural(&p, "writer", "writers");
        out.push(knee_sentence(&label, &c, "write size", say::rate));
        if let Some(smallest) = smallest_vs_best(&c) {
            out.push(format!("{label}: {smallest}."));
        }
        curves.push((p, c));
    }
    if let [(p1, one), .., (p2, two)] = curves.as_slice() {
        out.extend(more_writers(p1, one, p2, two));
    }
    out
}

/// "256 B writes reach 1.3% of the best (77× less)", when the smallest size is not the best.
fn smallest_vs_best(c: &Curve) -> Option<String> {
    let b = shape::best(&c.ys)?;
    if b == 0 {
        return None;
    }
    let share = shape::ratio(c.ys[0], c.ys[b])?;
    let times_less = shape::ratio(c.ys[b], c.ys[0])
        .map(|r| format!(" ({} less)", say::times(r)))
        .unwrap_or_default();
    Some(format!(
        "{} writes reach {} of the best{times_less}",
        size_label(&c.labels[0]),
        say::pct(share)
    ))
}

/// The average gain of `p2` writers over `p1` at write sizes of 64K and larger.
fn more_writers(p1: &str, one: &Curve, p2: &str, two: &Curve) -> Option<String> {
    let gains: Vec<f64> = one
        .labels
        .iter()
        .zip(&one.xs)
        .zip(&one.ys)
        .filter(|((_, x), _)| **x >= LARGE)
        .filter_map(|((l, _), y1)| shape::percent_gain(*y1, two.at(l)?))
        .collect();
    let avg = shape::mean(&gains)?;
    let how = if avg >= 0.0 { "more" } else { "less" };
    Some(format!(
        "At 64K and larger, {p2} writers move {} {how} than {p1} on average over {} (the HIPPI study saw 5-10% more from 2 processes).",
        say::percent(avg.abs()),
        say::plural(&gains.len().to_string(), "size", "sizes")
    ))
}
