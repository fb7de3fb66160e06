//! cpu-scaling: throughput and CPU cost as the CPUs both ends may use grow from 1 to all of this
//! machine's (`--cpus N` pins the workers to CPUs 0..N-1), for 1 and 10 connections. The classic
//! study needed 2 CPUs to drive a gigabit card and 3 per card to receive with 10 connections.

use super::shared::{iterations, timing};
use crate::curve::{curve, number_x, values, Curve};
use crate::spec::{axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "cpu-scaling",
    question: "How do throughput and CPU per GB change as the number of usable CPUs grows?",
    source: "Sun Fire 6800 gigabit Ethernet study, CPU figures",
    needs_lab: false,
    sweeps,
    findings,
};

/// A step smaller than this gain counts as no longer scaling.
const MIN_GAIN: f64 = 0.10;

/// CPU counts: all of 1..=cpus in full; in quick, at most four (1, 2, half, all).
fn cpu_counts(quick: bool, cpus: u32) -> Vec<String> {
    let n = cpus.max(1);
    let mut counts: Vec<u32> = if quick && n > 4 {
        vec![1, 2, n / 2, n]
    } else {
        (1..=n).collect()
    };
    counts.dedup();
    counts.iter().map(u32::to_string).collect()
}

fn sweeps(quick: bool, cpus: u32) -> Vec<SweepSpec> {
    let counts = cpu_counts(quick, cpus);
    let counts: Vec<&str> = counts.iter().map(String::as_str).collect();
    vec![SweepSpec {
        title: "CPUs, 1 and 10 connections".into(),
        kind: KindId::Stream,
        args: timing(quick),
        axes: vec![axis("cpus", &counts), axis("parallel", &["1", "10"])],
        iterations: iterations(quick),
        x_axis: "cpus".into(),
        metric: metric::BITS_PER_SECOND.name.into(),
        more_metrics: vec![
            metric::CPU_S_PER_GB.name.into(),
            metric::CPU_LOCAL_PERCENT.name.into(),
        ],
        ..SweepSpec::default()
    }]
}

fn findings(series: &[Series]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(s) = series.first() else {
        return out;
    };
    for p in values(s, "parallel") {
        let label = say::plural(&p, "connection", "connections");
        let by_cpus = |m| curve(s, "cpus", m, &[("parallel", &p)], number_x);
        let bps = by_cpus(metric::BITS_PER_SECOND.name);
        out.push(speedup(&label, &bps));
        out.extend(cpu_cost(&label, &by_cpus(metric::CPU_S_PER_GB.name)));
        out.extend(plateau(&label, &bps));
    }
    out
}

fn cpus(x: f64) -> String {
    say::plural(&format!("{x:.0}"), "CPU", "CPUs")
}

/// "1 connection: 1 CPU gives 10.2 Gbit/s, 4 CPUs 31.5 Gbit/s: 3.1× (...)".
fn speedup(label: &str, c: &Curve) -> String {
    match c.len() {
        0 => return format!("{label}: no point succeeded."),
        1 => {
            return format!(
                "{label}: only {} ran ({}); nothing to compare.",
                cpus(c.xs[0]),
                say::rate(c.ys[0])
            )
        }
        _ => {}
    }
    let (x0, y0, x1, y1) = (c.xs[0], c.ys[0], c.xs[c.len() - 1], c.ys[c.len() - 1]);
    let head = format!(
        "{label}: {} gives {}, {} {}",
        cpus(x0),
        say::rate(y0),
        cpus(x1),
        say::rate(y1)
    );
    match (
        shape::ratio(y1, y0),
        shape::scaling_efficiency(x0, y0, x1, y1),
        shape::marginal_share(x0, y0, x1, y1),
    ) {
        (Some(r), Some(eff), Some(share)) => format!(
            "{head}: {} (scaling efficiency {}; each added CPU adds {} of the per-CPU throughput at {}).",
            say::times(r),
            say::pct(eff),
            say::pct(share),
            cpus(x0)
        ),
        _ => format!("{head}."),
    }
}

/// "1 connection: CPU per GB goes from 1.20 to 1.45 CPU-seconds (+21%) from 1 to 4 CPUs."
fn cpu_cost(label: &str, c: &Curve) -> Option<String> {
    if c.len() < 2 {
        return None;
    }
    let (y0, y1) = (c.ys[0], c.ys[c.len() - 1]);
    let change = shape::percent_gain(y0, y1)
        .map(|g| format!(" ({}{})", if g >= 0.0 { "+" } else { "" }, say::percent(g)))
        .unwrap_or_default();
    Some(format!(
        "{label}: CPU per GB goes from {} to {} CPU-seconds{change} from {} to {}.",
        say::num(y0),
        say::num(y1),
        cpus(c.xs[0]),
        cpus(c.xs[c.len() - 1])
    ))
}

/// Where more CPUs stop adding 10%.
fn plateau(label: &str, c: &Curve) -> Option<String> {
    if c.len() < 2 || shape::best(&c.ys).is_none_or(|b| c.ys[b] <= 0.0) {
        return None;
    }
    Some(match shape::plateau(&c.ys, MIN_GAIN) {
        Some(i) => format!(
            "{label}: beyond {}, more CPUs add under {}.",
            cpus(c.xs[i]),
            say::pct(MIN_GAIN)
        ),
        None => format!(
            "{label}: throughput still gains {} or more up to {}.",
            say::pct(MIN_GAIN),
            cpus(c.xs[c.len() - 1])
        ),
    })
}
