//! many-flows: aggregate throughput from 1 to 2000 connections on one host. The classic 10 GbE
//! study saw receive fall from 30 to 15 Gbit/s at 2000 connections (the cost of small ACKs).

use super::shared::{iterations, timing, KNEE};
use crate::curve::{curve, number_x};
use crate::spec::{axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "many-flows",
    question: "How does aggregate throughput hold up from 1 to 2000 connections?",
    source: "T5440 10 GbE study (uperf, 2000 connections)",
    needs_lab: false,
    sweeps,
    findings,
};

const FULL: [&str; 6] = ["1", "10", "100", "500", "1000", "2000"];
const QUICK: [&str; 4] = ["1", "10", "100", "500"];

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    vec![SweepSpec {
        title: "Connections".into(),
        kind: KindId::Stream,
        args: timing(quick),
        axes: vec![axis("parallel", if quick { &QUICK } else { &FULL })],
        iterations: iterations(quick),
        x_axis: "parallel".into(),
        metric: metric::BITS_PER_SECOND.name.into(),
        more_metrics: vec![
            metric::CPU_S_PER_GB.name.into(),
            metric::RETRANSMITS.name.into(),
        ],
        ..SweepSpec::default()
    }]
}

fn flows(label: &str) -> String {
    say::plural(label, "flow", "flows")
}

fn findings(series: &[Series]) -> Vec<String> {
    let Some(s) = series.first() else {
        return Vec::new();
    };
    let c = curve(s, "parallel", metric::BITS_PER_SECOND.name, &[], number_x);
    let last = c.len().saturating_sub(1);
    let (Some(b), Some(k)) = (shape::best(&c.ys), shape::knee(&c.ys, KNEE)) else {
        return vec![if c.is_empty() {
            "No point succeeded.".to_string()
        } else {
            "Nothing moved at any connection count.".to_string()
        }];
    };
    let peak = format!(
        "Peak aggregate {} at {}",
        say::rate(c.ys[b]),
        flows(&c.labels[b])
    );
    let mut out = Vec::new();
    if b == last {
        out.push(format!("{peak}, the most tried."));
    } else {
        let drop = shape::ratio(c.ys[b] - c.ys[last], c.ys[b]).map_or(0.0, |r| r * 100.0);
        out.push(format!(
            "{peak}; at {} it is {}, {} below the peak.",
            flows(&c.labels[last]),
            say::rate(c.ys[last]),
            say::percent(drop)
        ));
    }
    if k < b {
        out.push(format!(
            "The aggregate first reaches {} of the peak at {}.",
            say::pct(KNEE),
            flows(&c.labels[k])
        ));
    }
    out
}
