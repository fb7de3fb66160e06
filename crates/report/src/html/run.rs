//! A run's section of the HTML report: what ran, the summary table (throughput and CPU for
//! streams, transactions and latency for request/response), the hosts, warnings, the advisor's
//! findings when the run has them, and the interval charts.

use super::{charts, esc, notes, table};
use crate::floor::text::human_bytes;
use crate::metric::{rr, BITS_PER_SECOND, CWND, PACKETS, RETRANSMITS, RTT_US};
use crate::model::{Interval, Report, Summary};
use crate::plot::interval_chart;
use crate::table::rate;

/// The section of run `r`, headed `title`, with `about` (what ran) under the heading and under
/// every chart.
pub fn section(title: &str, r: &Report, about: &[String]) -> String {
    let mut h = format!("<section>\n<h2>{}</h2>\n", esc(title));
    h.push_str(&format!("<p class=\"meta\">{}</p>\n", esc(&describe(r))));
    for line in about {
        h.push_str(&format!(
            "<p class=\"meta\"><code>{}</code></p>\n",
            esc(line)
        ));
    }
    h.push_str(&notes(&r.warnings, r.error.as_deref()));
    h.push_str(&super::advice::part(r.advice.as_deref()));
    let rows: Vec<Vec<(String, bool)>> = summary(&r.summary)
        .into_iter()
        .map(|(k, v)| vec![(k.to_string(), false), (v, true)])
        .collect();
    let head = [("Figure".to_string(), false), ("Value".to_string(), true)];
    h.push_str("<div class=\"tables\">\n");
    h.push_str(&table("summary", &head, &rows));
    if !r.hosts.is_empty() {
        h.push_str(&hosts(r));
    }
    h.push_str("</div>\n");
    h.push_str(&charts(
        chart_metrics(r)
            .into_iter()
            .map(|m| interval_chart(r, m))
            .collect(),
        about,
    ));
    h.push_str("</section>\n");
    h
}

/// "stream, forward, 1 flow, 3 s window after 1 s warm-up, to 192.0.2.10:5301".
fn describe(r: &Report) -> String {
    let t = &r.test;
    let clients = t.clients.len().max(1) as u64;
    let flows = u64::from(t.parallel) * clients;
    let mut parts = vec![
        t.kind.clone(),
        t.direction.clone(),
        match clients {
            1 => crate::words::plural(flows, "flow"),
            n => format!(
                "{} ({} from each of {n} clients)",
                crate::words::plural(flows, "flow"),
                t.parallel
            ),
        },
    ];
    match (t.duration_s, t.bytes) {
        (Some(d), _) => parts.push(format!("{d} s window after {} s warm-up", t.omit_s)),
        (None, Some(b)) => parts.push(crate::words::bytes_limit(t, b)),
        (None, None) => {}
    }
    parts.push(format!("to {}", t.agent));
    parts.join(", ")
}

/// The summary's figures as (name, value).
fn summary(s: &Summary) -> Vec<(&'static str, String)> {
    let pct = |v: f64| format!("{v:.1}%");
    let mut rows = Vec::new();
    if let Some(rr) = s.rr() {
        let tps = rr.transactions_per_second;
        rows.push(("Transactions/s", format!("{tps:.0}")));
        rows.push(("Transactions", rr.transactions.to_string()));
        if let Some(l) = &rr.latency_us {
            rows.extend([
                ("Latency p50", us(l.p50)),
                ("Latency p90", us(l.p90)),
                ("Latency p99", us(l.p99)),
                ("Latency p99.9", us(l.p999)),
            ]);
        }
        if let Some(lost) = rr.lost {
            rows.push(("Lost", lost.to_string()));
        }
    } else {
        rows.push(("Throughput, receiver", rate(s.transfer.bits_per_second)));
        rows.push((
            "Throughput, sender",
            rate(s.transfer.sender_bits_per_second),
        ));
        for d in s.directions.iter().filter(|_| s.directions.len() > 1) {
            let name = if d.direction == "forward" {
                "Forward"
            } else {
                "Reverse"
            };
            rows.push((name, rate(d.bits_per_second)));
        }
        rows.push(("Bytes received", human_bytes(s.transfer.bytes)));
        rows.push(("Window", format!("{:.2} s", s.seconds)));
        rows.push(("Retransmits", s.retransmits.to_string()));
        if s.tcp.rtt_us > 0.0 {
            rows.push(("RTT", us(s.tcp.rtt_us)));
        }
    }
    let cpu = &s.cpu;
    rows.push(("CPU, local", pct(cpu.local.total)));
    rows.push(("CPU, remote", pct(cpu.remote.total)));
    match s.rr().map(|rr| &rr.cpu_us_per_transaction) {
        Some(d) => {
            rows.push(("CPU per transaction, local", format!("{:.1} µs", d.local)));
            rows.push(("CPU per transaction, remote", format!("{:.1} µs", d.remote)));
        }
        None => {
            let sd = &s.service_demand_us_per_kb;
            rows.push(("Service demand, local", format!("{:.3} µs/KB", sd.local)));
            rows.push(("Service demand, remote", format!("{:.3} µs/KB", sd.remote)));
        }
    }
    rows
}

/// Microseconds as "140 µs", or "12.5 ms" from a millisecond up.
fn us(v: f64) -> String {
    if v < 999.5 {
        format!("{v:.0} µs")
    } else {
        format!("{:.2} ms", v / 1000.0)
    }
}

fn hosts(r: &Report) -> String {
    let head: Vec<(String, bool)> = [
        ("Host", false),
        ("Role", false),
        ("Hostname", false),
        ("Kernel", false),
        ("CPUs", true),
        ("CPU busy", true),
        ("Received", true),
    ]
    .into_iter()
    .map(|(t, n)| (t.to_string(), n))
    .collect();
    let rows: Vec<Vec<(String, bool)>> = r
        .hosts
        .iter()
        .map(|h| {
            vec![
                (h.name.clone(), false),
                (h.role.clone(), false),
                (h.hostname.clone(), false),
                (h.kernel.clone(), false),
                (h.cpus.to_string(), true),
                (format!("{:.1}%", h.cpu.total), true),
                (rate(h.bits_per_second), true),
            ]
        })
        .collect();
    table("hosts", &head, &rows)
}

/// The interval charts worth drawing for `r`.
fn chart_metrics(r: &Report) -> Vec<&'static str> {
    let iv = &r.intervals;
    if iv.is_empty() {
        return Vec::new();
    }
    let mut m = Vec::new();
    if iv.iter().any(|i| i.rr().is_some()) {
        m.push(rr::TRANSACTIONS_PER_SECOND);
        if iv
            .iter()
            .filter_map(Interval::rr)
            .any(|rr| rr.latency_p99_us.is_some())
        {
            m.push(rr::LATENCY_P99_US);
        }
    } else {
        m.push(BITS_PER_SECOND);
        if iv.iter().any(|i| i.rtt_us > 0.0) {
            m.extend([RTT_US, CWND]);
        }
        if iv.iter().any(|i| i.retransmits > 0) {
            m.push(RETRANSMITS);
        }
    }
    if iv
        .iter()
        .flat_map(|i| &i.flows)
        .any(|f| f.data_segs_out > 0)
    {
        m.push(PACKETS);
    }
    m.into_iter().map(|m| m.name).collect()
}
