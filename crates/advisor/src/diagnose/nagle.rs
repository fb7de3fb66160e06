//! The Nagle and delayed-ACK cause in request/response tests: with TCP_NODELAY off, a message
//! written in pieces (or larger than one segment) leaves a small last piece that Nagle holds
//! until the first is acknowledged, while the peer delays that ACK (Linux: 40 ms at least,
//! 200 ms at most). The median latency then sits about 40 ms (or 200 ms) above the RTT. In an
//! open-loop test (`--rate`) the same holding makes each transaction take one schedule period:
//! that check is the report warning's (`warnings::held_by_schedule`).

use super::found::{ms, Found};
use crate::{Confidence, Severity};
use fathom_report::model::Report;
use fathom_report::warnings::held_by_schedule;

/// The delayed-ACK timers, with the window (ms above the RTT) in which a median counts as one.
const TIMERS: [(f64, f64, f64); 2] = [(40.0, 25.0, 80.0), (200.0, 150.0, 250.0)];

/// The Nagle finding of run `r`: a TCP rr test (one connection per flow) without --nodelay nor
/// --quickack whose median latency less its RTT falls near a delayed-ACK timer.
pub(super) fn findings(r: &Report) -> Option<Found> {
    if let Some((p50, period_us)) = held_by_schedule(r) {
        return Some(schedule(p50, period_us));
    }
    let t = &r.test;
    if t.kind != "rr" || t.nodelay || t.quickack || t.tls.is_some() {
        return None;
    }
    let latency = r.summary.rr()?.latency_us.as_ref()?;
    let rtt = r
        .flows
        .iter()
        .map(|f| f.min_rtt_us)
        .filter(|&v| v > 0)
        .min()
        .map(f64::from)?;
    let excess = (latency.p50 - rtt) / 1000.0;
    let &(timer, _, _) = TIMERS
        .iter()
        .find(|(_, lo, hi)| (*lo..=*hi).contains(&excess))?;
    let size = t.rr().map_or(0, |o| o.request_size);
    Some(Found {
        id: "nagle_delayed_ack",
        severity: Severity::Warning,
        confidence: Confidence::High,
        seen: format!(
            "the median latency was {} on a path whose minimum RTT was {}: {:.0} ms more, about the delayed-ACK timer ({timer:.0} ms); --nodelay was off ({size}-byte requests)",
            ms(latency.p50),
            ms(rtt),
            excess
        ),
        figures: vec![
            ("latency_p50_us", latency.p50),
            ("min_rtt_us", rtt),
            ("excess_ms", excess),
            ("delayed_ack_ms", timer),
        ],
        why: "with Nagle on, the last small piece of a message waits in the sender until the piece before it is acknowledged, and the receiver, with nothing to send yet, delays that ACK: every transaction waits out the timer".into(),
        change: "--nodelay (TCP_NODELAY; or --quickack on the receiver); in an application, write each message in one call, or set TCP_NODELAY".into(),
    })
}

/// An open-loop rr whose median is about one schedule period with Nagle on: the report
/// warning's check (`warnings::held_by_schedule`), as a finding.
fn schedule(p50: f64, period_us: f64) -> Found {
    Found {
        id: "nagle_delayed_ack",
        severity: Severity::Warning,
        confidence: Confidence::High,
        seen: format!(
            "the median latency was {} with requests sent on a schedule of one every {}; --nodelay was off",
            ms(p50),
            ms(period_us)
        ),
        figures: vec![("latency_p50_us", p50), ("schedule_period_us", period_us)],
        why: "with Nagle on, a response written while the one before is unacknowledged waits in the answering socket until the next request carries that ACK: each transaction takes about one schedule period".into(),
        change: "--nodelay (TCP_NODELAY; or --quickack)".into(),
    }
}
