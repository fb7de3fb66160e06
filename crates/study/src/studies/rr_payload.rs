//! rr-payload: transactions per second and latency of one connection's request/response for
//! payloads of 4 – 1460 bytes, with delayed ACK on and off (`--quickack on` turns it off). The
//! classic study found delayed ACK better at most sizes (the ACK rides on the response) and a
//! 140 µs round trip at 4 bytes (~70 µs one way).

use super::shared::{iterations, size_label};
use crate::curve::{curve, metric, size_x, values};
use crate::spec::{args, axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "rr-payload",
    question: "How do transactions/s and latency change with a 4 - 1460 byte payload, with delayed ACK on and off?",
    source: "TCP request/response latency study (Sun Fire 6800, Solaris 8)",
    needs_lab: false,
    sweeps,
    findings,
};

const FULL: [&str; 7] = ["4", "40", "100", "250", "536", "1024", "1460"];
const QUICK: [&str; 4] = ["4", "100", "536", "1460"];
const P50: &str = metric::rr::LATENCY_P50_US.name;

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    vec![SweepSpec {
        title: "Request/response payload, delayed ACK on and off".into(),
        kind: KindId::Rr,
        args: if quick {
            args(&["-t", "1s"])
        } else {
            args(&["-t", "10s", "--omit", "1s"])
        },
        axes: vec![
            axis("size", if quick { &QUICK } else { &FULL }),
            axis("quickack", &["on", "off"]),
        ],
        iterations: iterations(quick),
        x_axis: "size".into(),
        metric: metric::rr::TRANSACTIONS_PER_SECOND.name.into(),
        more_metrics: vec![P50.into(), metric::rr::LATENCY_P99_US.name.into()],
        ..SweepSpec::default()
    }]
}

/// How the findings call a `quickack` value: quick ACKs on means delayed ACK off.
fn delayed_ack(quickack: &str) -> &'static str {
    if quickack == "on" {
        "delayed ACK off"
    } else {
        "delayed ACK on"
    }
}

fn findings(series: &[Series]) -> Vec<String> {
    let Some(s) = series.first() else {
        return Vec::new();
    };
    let mut out: Vec<String> = delayed_vs_quick(s).into_iter().collect();
    let sizes: Vec<String> = values(s, "size")
        .into_iter()
        .filter(|size| ["on", "off"].iter().any(|q| tps_p50(s, size, q).is_some()))
        .collect();
    let ends: Vec<&String> = match sizes.as_slice() {
        [] => Vec::new(),
        [one] => vec![one],
        [first, .., last] => vec![first, last],
    };
    for size in ends {
        let parts: Vec<String> = ["off", "on"]
            .iter()
            .filter_map(|q| {
                let (tps, p50) = tps_p50(s, size, q)?;
                let p50 = p50.map_or(String::new(), |l| format!(" (p50 {})", say::micros(l)));
                Some(format!(
                    "{}/s{p50} with {}",
                    say::count(tps),
                    delayed_ack(q)
                ))
            })
            .collect();
        out.push(format!("At {}: {}.", size_label(size), parts.join(", ")));
    }
    out.extend(lowest_round_trip(s));
    out
}

/// Transactions/s at `size` with `quickack`, and its p50 latency when measured.
fn tps_p50(s: &Series, size: &str, quickack: &str) -> Option<(f64, Option<f64>)> {
    let p = crate::curve::point(s, &[("size", size), ("quickack", quickack)])?;
    Some((
        metric(p, metric::rr::TRANSACTIONS_PER_SECOND.name)?,
        metric(p, P50),
    ))
}

/// At how many sizes delayed ACK on beats off, and the average difference.
fn delayed_vs_quick(s: &Series) -> Option<String> {
    let delayed = curve(
        s,
        "size",
        metric::rr::TRANSACTIONS_PER_SECOND.name,
        &[("quickack", "off")],
        size_x,
    );
    let quick = curve(
        s,
        "size",
        metric::rr::TRANSACTIONS_PER_SECOND.name,
        &[("quickack", "on")],
        size_x,
    );
    let gains: Vec<f64> = delayed
        .labels
        .iter()
        .zip(&delayed.ys)
        .filter_map(|(l, d)| shape::percent_gain(quick.at(l)?, *d))
        .collect();
    let avg = shape::mean(&gains)?;
    let wins = gains.iter().filter(|g| **g > 0.0).count();
    let how = if avg >= 0.0 { "more" } else { "fewer" };
    Some(format!(
        "Delayed ACK on (quickack off) beats off at {wins} of {} payload sizes; on average it gives {} {how} transactions/s{}.",
        gains.len(),
        say::percent(avg.abs()),
        separated(s, &delayed.labels)
    ))
}

/// ", and the intervals separate at K of them", when the points were repeated.
fn separated(s: &Series, sizes: &[String]) -> String {
    let stat = |size: &str, q: &str| {
        crate::curve::point(s, &[("size", size), ("quickack", q)])?
            .metric(metric::rr::TRANSACTIONS_PER_SECOND.name)
            .filter(|st| st.n > 1)
            .cloned()
    };
    let pairs: Vec<_> = sizes
        .iter()
        .filter_map(|size| Some((stat(size, "off")?, stat(size, "on")?)))
        .collect();
    if pairs.is_empty() {
        return String::new();
    }
    let apart = pairs
        .iter()
        .filter(|(a, b)| a.ci_low > b.ci_high || b.ci_low > a.ci_high)
        .count();
    format!(
        "; the {} intervals of the two separate at {apart} of {}",
        say::percent(pairs[0].0.ci_level * 100.0),
        pairs.len()
    )
}

/// The lowest p50 round trip over every point, and its one-way half.
fn lowest_round_trip(s: &Series) -> Option<String> {
    let (p, rtt) = s
        .points
        .iter()
        .filter_map(|p| Some((p, metric(p, P50).filter(|l| *l > 0.0)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let at = match (p.param("size"), p.param("quickack")) {
        (Some(size), Some(q)) => format!(" at {}, {}", size_label(size), delayed_ack(q)),
        _ => String::new(),
    };
    Some(format!(
        "The lowest round trip is {} (p50{at}): about {} one way (the classic study: 140 µs, ~70 µs one way).",
        say::micros(rtt),
        say::micros(rtt / 2.0)
    ))
}
