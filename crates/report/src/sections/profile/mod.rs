//! A profile group's section: a stream's terminal table with the group's lines after the
//! retransmits (iterations and their latency, each end's bytes, and a row per flow operation
//! with its count, bytes and mean time at both ends, as uperf's per-flowop statistics); its
//! figures in [`figures`], its records in [`model`], its CSV columns in [`csv`].

pub mod csv;
pub mod figures;
pub mod interval;
pub mod metrics;
pub mod model;
pub mod phases;
pub mod responsiveness;

use crate::floor::text::rtt;
use crate::metric::Metric;
use crate::model::{FlowResult, Interval, KindInterval, Latency, Report, Summary};
use crate::run::View;
use crate::section::{Item, Section, Span};
use crate::table_stream;
use model::ProfileSummary;

/// The profile section.
#[derive(Debug)]
pub struct Profile;

/// The profile section.
pub static PROFILE: Profile = Profile;

impl Section for Profile {
    /// A profile's test has no byte budget of its own (its limit is open-ended): it ends
    /// when every flow's program has.
    fn bytes_limit(&self, _bytes: u64) -> String {
        "until every flow's program ends".to_string()
    }

    fn fill(&self, v: &View<'_>, summary: &mut Summary, _flows: &mut [FlowResult]) {
        figures::fill(v, summary);
    }

    fn interval<'s>(&self, v: &View<'_>, span: &Span<'s>) -> Option<KindInterval> {
        Some(KindInterval::Profile(interval::interval(v, span)))
    }

    fn metrics(&self) -> &'static [Metric] {
        metrics::METRICS
    }

    /// Each flow operation's figures at both ends ([`csv`]).
    fn csv_heads(&self) -> &'static [&'static str] {
        csv::heads()
    }

    fn csv_cells(&self, iv: Option<&Interval>) -> Vec<String> {
        csv::cells(iv)
    }

    /// The stream's lines, but the buffer lines only when a socket reported its buffers: each
    /// profile flow reads its own as its connections open and close, and a run stored before
    /// that, or one whose flows never connected, has none (granted 0 would not be true).
    fn summary(&self, r: &Report, item: &mut Item<'_>) {
        let b = &r.summary.buffers;
        let unknown = b.effective_send == 0 && b.effective_recv == 0;
        let mut kept = |label: &str, value: String| {
            if !(unknown && matches!(label, "send buffer" | "recv buffer")) {
                item(label, value);
            }
        };
        table_stream::summary(r, &mut kept, &mut |item| self.after_retransmits(r, item));
    }

    /// The profile's lines after the stream's retransmits.
    fn after_retransmits(&self, r: &Report, item: &mut Item<'_>) {
        if let Some(p) = r.summary.profile() {
            lines(p, item);
        }
    }
}

/// The profile's lines: iterations, latency, each end's bytes, then one per flow operation.
fn lines(p: &ProfileSummary, item: &mut Item<'_>) {
    item(
        "iterations",
        format!("{} ({:.1}/s)", p.iterations, p.iterations_per_second),
    );
    if let Some(l) = &p.latency_us {
        item(
            "iteration time",
            format!("p50 {}  p99 {}  max {}", rtt(l.p50), rtt(l.p99), rtt(l.max)),
        );
    }
    for (label, e) in [("client bytes", p.client), ("agent bytes", p.server)] {
        item(label, format!("sent {}, received {}", e.sent, e.received));
    }
    for (i, o) in p.ops.iter().enumerate() {
        let mut line = format!(
            "{} (transaction {}): client {} × {} B {:.1} µs{}; agent {} × {} B {:.1} µs{}",
            o.name,
            o.transaction,
            o.client.count,
            o.client.bytes,
            o.client.mean_us,
            failed(o.client.failed, &o.name),
            o.server.count,
            o.server.bytes,
            o.server.mean_us,
            failed(o.server.failed, &o.name),
        );
        if let Some(n) = o.lost {
            line.push_str(&format!("; lost {n}"));
        }
        item(&format!("flowop {}", i + 1), line);
        if o.client.latency_us.is_some() || o.server.latency_us.is_some() {
            let times = format!(
                "client {}; agent {}",
                times(o.client.latency_us.as_ref()),
                times(o.server.latency_us.as_ref())
            );
            item(&format!("  time {}", i + 1), times);
        }
    }
}

/// A flow operation's times at one end: p50, p90, p99 and max.
fn times(l: Option<&Latency>) -> String {
    match l {
        None => "-".to_string(),
        Some(l) => format!(
            "p50 {} p90 {} p99 {} max {}",
            rtt(l.p50),
            rtt(l.p90),
            rtt(l.p99),
            rtt(l.max)
        ),
    }
}

/// An end's failures of a flow operation, when there were any: a `recv`'s are datagrams
/// that did not come in time.
fn failed(n: u64, op: &str) -> String {
    match (n, op) {
        (0, _) => String::new(),
        (n, "recv") => format!(" ({n} timed out)"),
        (n, _) => format!(" ({n} failed)"),
    }
}
