//! The UDP stream section: its terminal table's parts (intervals with datagrams/s, rate, loss and
//! jitter, the per-flow rows, the summary lines: loss, reordering, jitter, where the missing
//! went); its figures in [`figures`], its records in [`model`].

pub mod figures;
pub mod metrics;
pub mod model;

use crate::cells::{buffers, cpu_lines};
use crate::floor::text::{arrow, num, pct, rate, rtt};
use crate::metric::Metric;
use crate::model::{
    FlowResult, Interval, KindInterval, KindTest, Report, Summary, TestEcho, UdpSummary, UdpTest,
};
use crate::run::View;
use crate::section::{Item, Section, Span};
use fathom_proto::plan::TestPlan;

/// The UDP stream's CSV columns after the common ones: datagrams read, their rate, and the
/// receivers' sequence accounting (empty where the datagrams carried no sequence number or
/// send time).
pub const UDP_COLUMNS: [&str; 6] = [
    "datagrams",
    "datagrams_per_second",
    "lost",
    "duplicates",
    "reordered",
    "jitter_us",
];

/// The UDP stream section.
#[derive(Debug)]
pub struct Udp;

impl Section for Udp {
    fn echo(&self, plan: &TestPlan, echo: &mut TestEcho) {
        echo.section = figures::echo(plan).map(KindTest::Udp);
    }

    fn fill(&self, v: &View<'_>, summary: &mut Summary, flows: &mut [FlowResult]) {
        figures::fill(v, summary, flows);
    }

    fn interval<'s>(&self, v: &View<'_>, span: &Span<'s>) -> Option<KindInterval> {
        Some(KindInterval::Udp(figures::interval(v, span)))
    }

    fn metrics(&self) -> &'static [Metric] {
        metrics::METRICS
    }

    fn head(&self) -> String {
        head()
    }

    fn row(&self, label: &str, iv: &Interval) -> String {
        row(label, iv)
    }

    fn flows(&self, r: &Report) -> Vec<String> {
        flows(&r.flows)
    }

    fn summary(&self, r: &Report, item: &mut Item<'_>) {
        if let Some(u) = r.summary.udp() {
            summary(r, u, item);
        }
        item("recv buffer", buffers(&r.summary.buffers, r).1);
        cpu_lines(r, item);
    }

    fn csv_heads(&self) -> &'static [&'static str] {
        &UDP_COLUMNS
    }

    /// An interval's datagram figures; empty on flow rows.
    fn csv_cells(&self, iv: Option<&Interval>) -> Vec<String> {
        let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        match iv.and_then(Interval::udp) {
            None => vec![String::new(); UDP_COLUMNS.len()],
            Some(u) => vec![
                u.datagrams.to_string(),
                num(u.datagrams_per_second),
                opt(u.lost),
                opt(u.duplicates),
                opt(u.reordered),
                u.jitter_us.map_or(String::new(), num),
            ],
        }
    }
}

/// "-" for a figure the datagram size could not carry.
fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// Datagrams per second, readable ("1.52M", "845k", "120").
fn per_s(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.2}M", v / 1e6),
        v if v >= 1e4 => format!("{:.0}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

/// The interval table's column heads: datagrams/s at the receiver and the sender, bit rate,
/// loss, jitter, CPU.
pub fn head() -> String {
    format!(
        "{:>11} {:>10} {:>10} {:>13} {:>8} {:>9} {:>10} {:>7}",
        "time", "dgrams/s", "sender", "receiver", "lost", "jitter", "cpu local", "remote"
    )
}

/// One interval's line, under `label` (its time span, or a host's name).
pub fn row(label: &str, iv: &Interval) -> String {
    let u = iv.udp().cloned().unwrap_or_default();
    format!(
        "{:>11} {:>10} {:>10} {:>13} {:>8} {:>9} {:>10} {:>7}",
        label,
        per_s(u.datagrams_per_second),
        per_s(u.sender_datagrams_per_second),
        rate(iv.bits_per_second),
        opt(u.lost),
        u.jitter_us.map_or("-".into(), rtt),
        pct(iv.cpu_local),
        pct(iv.cpu_remote)
    )
}

/// One line per flow: its datagrams, rate, loss, duplicates, reordering and jitter.
pub fn flows(list: &[FlowResult]) -> Vec<String> {
    let mut lines = vec![format!(
        "{:>4} {:^3} {:>10} {:>10} {:>13} {:>8} {:>6} {:>8} {:>9}",
        "flow", "dir", "datagrams", "dgrams/s", "receiver", "lost", "dup", "reorder", "jitter"
    )];
    lines.extend(list.iter().map(|f| {
        let u = f.udp().cloned().unwrap_or_default();
        format!(
            "{:>4} {:^3} {:>10} {:>10} {:>13} {:>8} {:>6} {:>8} {:>9}",
            f.id,
            arrow(&f.direction),
            u.datagrams,
            per_s(u.datagrams_per_second),
            rate(f.transfer.bits_per_second),
            opt(u.lost),
            opt(u.duplicates),
            opt(u.reordered),
            u.jitter_us.map_or("-".into(), rtt),
        )
    }));
    lines
}

/// The summary lines particular to a UDP stream; `item` prints one labelled line.
pub fn summary(r: &Report, u: &UdpSummary, item: &mut Item<'_>) {
    let t = r.test.udp().cloned().unwrap_or_default();
    item(
        "datagrams",
        format!(
            "{} received in {:.2} s: {}/s, {} ({}-byte datagrams)",
            u.datagrams,
            r.summary.seconds,
            per_s(u.datagrams_per_second),
            rate(r.summary.transfer.bits_per_second),
            t.size
        ),
    );
    item(
        "sender",
        format!(
            "{} sent: {}/s, {}",
            u.sender_datagrams,
            per_s(u.sender_datagrams_per_second),
            rate(r.summary.transfer.sender_bits_per_second)
        ),
    );
    if let (Some(lost), Some(p)) = (u.lost, u.lost_percent) {
        item(
            "lost",
            format!(
                "{lost} ({}), duplicates {}, reordered {} (largest distance {})",
                pct(p),
                opt(u.duplicates),
                opt(u.reordered),
                opt(u.reorder_max_distance)
            ),
        );
    }
    if let Some(j) = u.jitter_us {
        item(
            "jitter",
            format!("{} (RFC 3550, at the window's end)", rtt(j)),
        );
    }
    if let Some(d) = &u.one_way_delay {
        let basis = match d.clock.as_str() {
            "shared" => "one clock at both ends".to_string(),
            _ => format!("clocks offset-corrected, estimate ± {}", rtt(d.error_us)),
        };
        item(
            "one-way delay",
            format!("{} mean ({basis})", rtt(d.mean_us)),
        );
    }
    missing_and_batching(u, &t, item);
    let c = &u.cpu_ns_per_datagram;
    item(
        "cpu per dgram",
        format!("local {:.0} ns, remote {:.0} ns", c.local, c.remote),
    );
}

/// The datagrams that went missing and where, and how the datagrams were batched per call.
fn missing_and_batching(u: &UdpSummary, t: &UdpTest, item: &mut Item<'_>) {
    let m = &u.missing;
    item(
        "missing",
        format!(
            "{} sent but not received: receive buffer {}, send buffer {}, path {}, unexplained {} ({} more arrived after the window)",
            m.datagrams, m.receive_buffer, m.send_buffer, m.path, m.unexplained, m.in_flight
        ),
    );
    item(
        "",
        format!(
            "socket overflow {}; host Udp RcvbufErrors {}, InErrors {}, SndbufErrors {}",
            m.socket_rxq_overflow, m.host_rcvbuf_errors, m.host_in_errors, m.host_sndbuf_errors
        ),
    );
    let (calls, per) = (&u.calls_per_second, &u.datagrams_per_call);
    let unit = if t.gso { "messages" } else { "datagrams" };
    item(
        "batching",
        format!(
            "{} {unit} per call asked; sender {:.1}, receiver {:.1} datagrams per call; \
             system calls/s: sender {}, receiver {}",
            t.batch,
            per.sender,
            per.receiver,
            per_s(calls.sender),
            per_s(calls.receiver)
        ),
    );
    if t.gso {
        let m = &u.datagrams_per_message;
        item(
            "gso",
            format!(
                "datagrams ({}-byte wire packets) per message: sender {:.1} (UDP_SEGMENT), \
                 receiver {:.1} (UDP_GRO)",
                t.size, m.sender, m.receiver
            ),
        );
    }
}
