//! window-vs-rtt: how long a 48 MB transfer takes through the emulated WAN as the round trip
//! (0 – 200 ms) and the receive window (48K – 4M) vary. The classic scp study found a 1 MB window
//! up to 8× faster than 48 KB at 50 – 200 ms, and nothing more from larger windows.

use super::shared::{iterations, size_label};
use crate::curve::{curve, metric, point, size_x, values, Curve};
use crate::spec::{args, axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "window-vs-rtt",
    question: "How long does a 48 MB transfer take as RTT (0 - 200 ms) and the receive window (48K - 4M) vary?",
    source: "Solaris scp study over a programmable delay router",
    needs_lab: true,
    sweeps,
    findings,
};

const SECONDS: &str = metric::SECONDS.name;
const WINDOW: &str = metric::WINDOW_BYTES.name;
/// Below this share of its window/RTT bound, a window's shortfall is explained.
const SHORT: f64 = 0.8;
/// Slow start taking at least this share of a transfer explains a shortfall.
const EXPLAINS: f64 = 0.25;
/// Linux's initial congestion window, segments.
const INITIAL_CWND: f64 = 10.0;
/// Segment size through the lab's 1500-byte links, bytes.
const MSS: f64 = 1448.0;
/// A larger window gaining less than this speed-up counts as no longer helping.
const MIN_GAIN: f64 = 0.10;

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    let (bytes, rtts, windows): (&str, &[&str], &[&str]) = if quick {
        ("4M", &["0ms", "10ms", "50ms"], &["64K", "1M"])
    } else {
        (
            "48M",
            &["0ms", "10ms", "50ms", "100ms", "200ms"],
            &["48K", "64K", "256K", "1M", "4M"],
        )
    };
    vec![SweepSpec {
        title: format!("{bytes} transfer time by RTT and receive window"),
        kind: KindId::Stream,
        args: args(&["--server", "h1", "--clients", "h2", "-n", bytes]),
        axes: vec![axis("rtt", rtts), axis("rcvbuf", windows)],
        iterations: iterations(quick),
        x_axis: "rcvbuf".into(),
        metric: SECONDS.into(),
        more_metrics: vec![metric::BITS_PER_SECOND.name.into()],
        ..SweepSpec::default()
    }]
}

/// "the 48M transfer", from the series' `-n` option.
fn transfer(s: &Series) -> String {
    s.args
        .iter()
        .position(|a| a == "-n" || a == "--bytes")
        .and_then(|i| s.args.get(i + 1))
        .and_then(|v| shape::parse_size(v))
        .map_or("the transfer".into(), |b| {
            format!("the {} transfer", say::size(b))
        })
}

fn findings(series: &[Series]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(s) = series.first() else {
        return out;
    };
    let what = transfer(s);
    let mut speedups: Vec<(String, f64)> = Vec::new();
    for rtt in values(s, "rtt") {
        let Some(ms) = shape::parse_ms(&rtt) else {
            continue;
        };
        let at = format!("At {ms} ms RTT");
        let c = curve(s, "rcvbuf", SECONDS, &[("rtt", &rtt)], size_x);
        if let Some((sentence, r)) = speedup(&at, &what, &c) {
            out.push(sentence);
            speedups.push((at.clone(), r));
        }
        out.extend(plateau(&at, &c));
        if ms > 0.0 {
            out.extend(bound(&at, s, &rtt, ms));
        }
    }
    if speedups.len() > 1 {
        if let Some((at, r)) = speedups.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            out.push(format!(
                "The window matters most {}: {} (the classic scp study: up to 8× with 1 MB over 48 KB).",
                at.replacen("At", "at", 1),
                say::times(*r)
            ));
        }
    }
    out
}

/// "At 100 ms RTT a 1M window finishes the 48M transfer 8.1× faster than 48K (0.520 s vs 4.20 s)."
fn speedup(at: &str, what: &str, c: &Curve) -> Option<(String, f64)> {
    if c.len() < 2 {
        return None;
    }
    let (small, large) = (c.ys[0], c.ys[c.len() - 1]);
    let r = shape::ratio(small, large)?;
    let (wl, ws) = (size_label(&c.labels[c.len() - 1]), size_label(&c.labels[0]));
    let how = if r >= 1.0 {
        format!("{} faster", say::times(r))
    } else {
        format!("{} slower", say::times(1.0 / r))
    };
    Some((
        format!(
            "{at} a {wl} window finishes {what} {how} than {ws} ({} vs {}).",
            say::seconds(large),
            say::seconds(small)
        ),
        r,
    ))
}

/// "At 100 ms RTT, beyond 1M larger windows speed it up by under 10%."
fn plateau(at: &str, c: &Curve) -> Option<String> {
    if c.len() < 2 {
        return None;
    }
    let speed: Vec<f64> =
        c.ys.iter()
            .map(|s| if *s > 0.0 { 1.0 / s } else { f64::NAN })
            .collect();
    shape::best(&speed)?;
    Some(match shape::plateau(&speed, MIN_GAIN) {
        Some(i) => format!(
            "{at}, windows beyond {} speed it up by under {}.",
            size_label(&c.labels[i]),
            say::pct(MIN_GAIN)
        ),
        None => format!(
            "{at}, every larger window up to {} still speeds it up by {} or more.",
            size_label(&c.labels[c.len() - 1]),
            say::pct(MIN_GAIN)
        ),
    })
}

/// "At 100 ms RTT, throughput as a share of window/RTT (the window the receiver advertised):
/// 48K 99%, 1M 61%.", then, for each window well short of its bound, how much of the transfer
/// slow start alone needs to open that window.
fn bound(at: &str, s: &Series, rtt: &str, ms: f64) -> Vec<String> {
    let rtt_s = ms / 1e3;
    let cells: Vec<(String, &fathom_report::series::Point)> = values(s, "rcvbuf")
        .into_iter()
        .filter_map(|w| {
            let p = point(s, &[("rtt", rtt), ("rcvbuf", &w)])?;
            Some((w, p))
        })
        .collect();
    let advertised = cells.iter().all(|(_, p)| metric(p, WINDOW).is_some());
    let mut shares = Vec::new();
    let mut short = Vec::new();
    for (w, p) in &cells {
        let window = if advertised {
            metric(p, WINDOW)
        } else {
            shape::parse_size(w).map(|b| b as f64)
        };
        let Some(window) = window else { continue };
        let Some(share) = metric(p, metric::BITS_PER_SECOND.name)
            .and_then(|bps| shape::ratio(bps, window * 8.0 / rtt_s))
        else {
            continue;
        };
        shares.push(format!("{} {}", size_label(w), say::pct(share)));
        if share < SHORT {
            if let Some(took) = metric(p, SECONDS) {
                let rounds = (window / (INITIAL_CWND * MSS)).log2().ceil().max(1.0);
                let ramp = rounds * rtt_s / took;
                short.push(if ramp >= EXPLAINS {
                    format!(
                        "{at}, {} falls short of its bound: slow start needs about {} round trips ({}) to open a {} window, {} of the {} transfer.",
                        size_label(w),
                        rounds,
                        say::seconds(rounds * rtt_s),
                        say::approx_size(window),
                        say::pct(ramp),
                        say::seconds(took)
                    )
                } else {
                    format!(
                        "{at}, {} falls short of its bound, and slow start (about {} round trips, {} of the transfer) does not explain it.",
                        size_label(w),
                        rounds,
                        say::pct(ramp)
                    )
                });
            }
        }
    }
    if shares.is_empty() {
        return short;
    }
    let basis = if advertised {
        "the window the receiver advertised"
    } else {
        "the window asked for"
    };
    let mut out = vec![format!(
        "{at}, throughput as a share of the window/RTT bound ({basis}): {}.",
        shares.join(", ")
    )];
    out.extend(short);
    out
}
