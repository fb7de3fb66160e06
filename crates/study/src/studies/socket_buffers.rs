//! socket-buffers: which send and receive buffer sizes reach the best throughput with 1 and 10
//! connections (the Sun Fire 6800 gigabit study: one connection needed 48 KB and gained nothing
//! above 128 KB; 64 KB was the chosen compromise).

use super::shared::{iterations, knee_sentence, timing, KNEE};
use crate::curve::{curve, size_x, values, Curve};
use crate::spec::{axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "socket-buffers",
    question: "Which socket buffer size reaches the best throughput, for 1 and 10 connections, send and receive?",
    source: "Sun Fire 6800 gigabit Ethernet study (Solaris 8)",
    needs_lab: false,
    sweeps,
    findings,
};

const FULL: [&str; 8] = ["16K", "24K", "32K", "48K", "64K", "128K", "256K", "1M"];
const QUICK: [&str; 4] = ["16K", "64K", "256K", "1M"];
/// The two sides: option name and how the findings call it.
const SIDES: [(&str, &str); 2] = [("sndbuf", "Send buffer"), ("rcvbuf", "Receive buffer")];

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    let sizes: &[&str] = if quick { &QUICK } else { &FULL };
    SIDES
        .iter()
        .map(|(opt, name)| SweepSpec {
            title: format!("{name}, 1 and 10 connections"),
            kind: KindId::Stream,
            args: timing(quick),
            axes: vec![axis(opt, sizes), axis("parallel", &["1", "10"])],
            iterations: iterations(quick),
            x_axis: opt.to_string(),
            metric: metric::BITS_PER_SECOND.name.into(),
            more_metrics: vec![metric::CPU_S_PER_GB.name.into()],
            ..SweepSpec::default()
        })
        .collect()
}

fn findings(series: &[Series]) -> Vec<String> {
    let mut out = Vec::new();
    let mut curves: Vec<Curve> = Vec::new();
    for s in series {
        let Some((opt, name)) = SIDES
            .iter()
            .find(|(opt, _)| s.axes.iter().any(|a| a.name == *opt))
        else {
            continue;
        };
        let mut side_knees = Vec::new();
        for p in values(s, "parallel") {
            let c = curve(
                s,
                opt,
                metric::BITS_PER_SECOND.name,
                &[("parallel", &p)],
                size_x,
            );
            let conns = say::plural(&p, "connection", "connections");
            out.push(knee_sentence(
                &format!("{name}, {conns}"),
                &c,
                "buffer",
                say::rate,
            ));
            if let Some(k) = knee_size(&c) {
                side_knees.push(format!("{} with {conns}", say::size(k)));
            }
            curves.push(c);
        }
        if side_knees.len() > 1 {
            out.push(format!(
                "{name}: the knee is {}; the classic gigabit study needed 48 KB for one connection.",
                side_knees.join(" and ")
            ));
        }
    }
    if let Some(size) = everywhere_good(&curves) {
        out.push(format!(
            "{} is the smallest buffer within {} of the best in every case measured (the classic study chose 64 KB).",
            say::size(size),
            say::pct(1.0 - KNEE)
        ));
    }
    out
}

/// The knee's buffer size in bytes, when the curve has two points or more and moved data.
fn knee_size(c: &Curve) -> Option<u64> {
    if c.len() < 2 {
        return None;
    }
    shape::knee(&c.ys, KNEE).map(|i| c.xs[i] as u64)
}

/// The smallest buffer that every curve (two or more, each with two points or more) measured
/// and where each reached the knee share of its own best.
fn everywhere_good(curves: &[Curve]) -> Option<u64> {
    if curves.len() < 2 || curves.iter().any(|c| c.len() < 2) {
        return None;
    }
    let mut sizes: Vec<u64> = curves
        .iter()
        .flat_map(|c| c.xs.iter().map(|x| *x as u64))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.into_iter().find(|&size| {
        curves.iter().all(|c| {
            let top = shape::best(&c.ys).map(|b| c.ys[b]).unwrap_or(0.0);
            let at = c.xs.iter().position(|x| *x as u64 == size).map(|i| c.ys[i]);
            top > 0.0 && at.is_some_and(|y| y >= KNEE * top)
        })
    })
}
