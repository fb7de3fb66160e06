//! The request/response section: its terminal table's parts (intervals with transactions and
//! latency, the per-flow rows, the summary lines a latency study reads); its figures in
//! [`figures`], its records in [`model`].

pub mod figures;
pub mod metrics;
pub mod model;

use crate::cells::cpu_lines;
use crate::floor::text::{arrow, pct, rtt};
use crate::metric::Metric;
use crate::model::{
    FlowResult, Interval, KindInterval, KindTest, Latency, Report, RrSummary, RrTest, Summary,
    TestEcho,
};
use crate::run::View;
use crate::section::{Item, Section, Span};
use fathom_proto::kind::{Descriptor, Figure, KindId, Transport};
use fathom_proto::plan::TestPlan;

/// The request/response section; `lossy` adds the lost column (UDP request/response).
#[derive(Debug)]
pub struct Rr {
    lossy: bool,
}

static RR: Rr = Rr { lossy: false };
static RR_LOSSY: Rr = Rr { lossy: true };

/// The request/response section, with the lost column when `lossy`.
pub fn section(lossy: bool) -> &'static dyn Section {
    if lossy {
        &RR_LOSSY
    } else {
        &RR
    }
}

impl Section for Rr {
    fn echo(&self, plan: &TestPlan, echo: &mut TestEcho) {
        echo.section = figures::echo(plan).map(KindTest::Rr);
    }

    fn fill(&self, v: &View<'_>, summary: &mut Summary, flows: &mut [FlowResult]) {
        figures::fill(v, summary, flows);
    }

    fn interval<'s>(&self, v: &View<'_>, span: &Span<'s>) -> Option<KindInterval> {
        Some(KindInterval::Rr(figures::interval(v, span)))
    }

    fn transactions_per_second(&self, flows: &mut dyn Iterator<Item = &FlowResult>) -> Option<f64> {
        Some(crate::floor::total(
            flows
                .filter_map(FlowResult::rr)
                .map(|r| r.transactions_per_second),
        ))
    }

    fn metrics(&self) -> &'static [Metric] {
        metrics::METRICS
    }

    fn head(&self) -> String {
        head(self.lossy)
    }

    fn row(&self, label: &str, iv: &Interval) -> String {
        row(label, iv, self.lossy)
    }

    fn flows(&self, r: &Report) -> Vec<String> {
        let connected =
            KindId::from_name(&r.test.kind).is_some_and(|k| one_connection(k.descriptor()));
        flows(&r.flows, connected)
    }

    fn summary(&self, r: &Report, item: &mut Item<'_>) {
        if let Some(rr) = r.summary.rr() {
            summary(r, rr, item);
        }
        cpu_lines(r, item);
    }
}

/// True for a kind whose every flow keeps one TCP connection for all its transactions (rr;
/// not crr, which connects per transaction, nor UDP request/response).
pub(crate) fn one_connection(d: &Descriptor) -> bool {
    d.transport == Transport::Tcp && !d.adds(Figure::ConnectionsPerSecond)
}

/// The interval table's column heads: transactions/s, median and 99th-percentile latency,
/// losses (when `lossy`), CPU.
pub fn head(lossy: bool) -> String {
    let mut head = format!("{:>11} {:>12} {:>10} {:>10}", "time", "tx/s", "p50", "p99");
    if lossy {
        head += &format!(" {:>7}", "lost");
    }
    head + &format!(" {:>10} {:>7}", "cpu local", "remote")
}

/// One interval's line, under `label` (its time span, or a host's name).
pub fn row(label: &str, iv: &Interval, lossy: bool) -> String {
    let rr = iv.rr().cloned().unwrap_or_default();
    let mut line = format!(
        "{:>11} {:>12} {:>10} {:>10}",
        label,
        format!("{:.0}", rr.transactions_per_second),
        rr.latency_p50_us.map_or("-".into(), rtt),
        rr.latency_p99_us.map_or("-".into(), rtt),
    );
    if lossy {
        line += &format!(" {:>7}", rr.lost.unwrap_or(0));
    }
    line + &format!(" {:>10} {:>7}", pct(iv.cpu_local), pct(iv.cpu_remote))
}

/// One line per flow: its transactions and TCP state; `connected` says each flow kept one TCP
/// connection (rr), without which (crr, UDP) there is no RTT or window to show.
pub fn flows(list: &[FlowResult], connected: bool) -> Vec<String> {
    let mut lines = vec![format!(
        "{:>4} {:^3} {:>12} {:>12} {:>6} {:>9} {:>7}",
        "flow", "dir", "transactions", "tx/s", "retr", "rtt", "cwnd"
    )];
    lines.extend(list.iter().map(|f| {
        let rr = f.rr().cloned().unwrap_or_default();
        format!(
            "{:>4} {:^3} {:>12} {:>12} {:>6} {:>9} {:>7}",
            f.id,
            arrow(&f.direction),
            rr.transactions,
            format!("{:.0}", rr.transactions_per_second),
            f.retransmits,
            if connected {
                rtt(f.rtt_us.into())
            } else {
                "—".into()
            },
            if connected {
                f.cwnd.to_string()
            } else {
                "—".into()
            }
        )
    }));
    lines
}

/// The summary lines particular to request/response (`s`, the summary's rr section); `item`
/// prints one labelled line.
pub fn summary(r: &Report, s: &RrSummary, item: &mut Item<'_>) {
    let t = r.test.rr().cloned().unwrap_or_default();
    let tx = s.transactions;
    let size = match (t.request_size, t.response_size) {
        (q, p) if q == p => format!("{q}-byte request and response"),
        (q, p) => format!("{q}-byte request, {p}-byte response"),
    };
    item(
        "transactions",
        format!(
            "{tx} in {:.2} s: {:.0} tx/s ({size})",
            r.summary.seconds, s.transactions_per_second
        ),
    );
    if let Some(c) = s.connections_per_second {
        item(
            "connections",
            format!("{c:.0} per second, one per transaction"),
        );
    }
    if let Some(lost) = s.lost {
        let all = tx + lost;
        item(
            "lost",
            format!(
                "{lost} of {all} ({}) unanswered within {:.1} ms",
                pct(ratio(lost, all) * 100.0),
                t.udp_timeout_ms.unwrap_or(0.0)
            ),
        );
    }
    match &s.latency_us {
        Some(l) => {
            item("latency", percentiles(l));
            item(
                "",
                format!(
                    "mean {} ± {}, one way ≈ {} (estimate: half the median round trip)",
                    rtt(l.mean),
                    rtt(l.stddev),
                    rtt(l.p50 / 2.0)
                ),
            );
        }
        None => item("latency", "no transaction completed".into()),
    }
    let c = &s.cpu_us_per_transaction;
    item(
        "cpu per tx",
        format!("local {:.1} µs, remote {:.1} µs", c.local, c.remote),
    );
    if let Some(seg) = &s.segments_per_transaction {
        item(
            "segs per tx",
            format!(
                "request {:.2}, response {:.2} (1 = ACKs ride on data, 2 = separate ACKs)",
                seg.request, seg.response
            ),
        );
    }
    item("method", method(r, &t));
    item("placement", placement(r));
}

/// How the transactions ran: open or closed loop, how the workers wait, the socket options.
fn method(r: &Report, t: &RrTest) -> String {
    let how = match (t.rate, t.burst) {
        (Some(rate), _) => {
            format!("open loop at {rate:.0} tx/s, latency from the scheduled instant")
        }
        (None, Some(b)) if b > 1 => format!("closed loop, {b} in flight per connection"),
        _ => "closed loop, one in flight per connection".into(),
    };
    let wait = if r.test.busy_poll {
        "busy-polling"
    } else {
        waiting(r, t)
    };
    format!(
        "{how}; workers {wait}{}{}",
        if r.test.nodelay { ", TCP_NODELAY" } else { "" },
        if r.test.quickack {
            ", TCP_QUICKACK"
        } else {
            ""
        }
    )
}

/// How workers that do not spin wait: a worker whose only flow is a clear TCP connection in a
/// closed loop waits in that connection's receive (as sockperf does), any other in epoll.
fn waiting(r: &Report, t: &RrTest) -> &'static str {
    let one_conn = KindId::from_name(&r.test.kind).is_some_and(|k| one_connection(k.descriptor()));
    let can = one_conn && r.test.tls.is_none() && t.rate.is_none();
    let busy = || {
        r.hosts
            .iter()
            .flat_map(|h| &h.threads)
            .filter(|th| th.flows > 0)
    };
    let lone = busy().filter(|th| th.flows == 1).count();
    match (can, lone) {
        (true, n) if n > 0 && n == busy().count() => "waiting in their connection's receive",
        (true, n) if n > 0 => {
            "waiting in their connection's receive where they had one, else sleeping in epoll"
        }
        _ => "sleeping in epoll",
    }
}

fn percentiles(l: &Latency) -> String {
    format!(
        "min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
        rtt(l.min),
        rtt(l.p50),
        rtt(l.p90),
        rtt(l.p99),
        rtt(l.p999),
        rtt(l.max)
    )
}

/// Where each host's workers ran: "local cpu1 (pinned); 127.0.0.1:5301 cpu0 (last seen)".
fn placement(r: &Report) -> String {
    let end = |name: &str, h: &crate::model::HostResult| {
        let cpus: Vec<String> = h
            .threads
            .iter()
            .map(|t| match t.pinned_cpu {
                Some(c) => format!("cpu{c} (pinned)"),
                None => format!("cpu{} (last seen)", t.last_cpu),
            })
            .collect();
        format!("{name} {}", cpus.join(", "))
    };
    r.hosts
        .iter()
        .map(|h| end(&h.name, h))
        .collect::<Vec<_>>()
        .join("; ")
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
