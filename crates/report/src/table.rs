//! The compact terminal output printed after a test: a header line, the interval table, the
//! per-flow table (for a few flows), the summary, then warnings and the error. Plain text, no
//! colors, columns aligned; the text may change between versions (the JSON is the contract).

use crate::export::Exporter;
use crate::model::{Buffers, Cpu, DirectionResult, FlowResult, Interval, Report};
use crate::warnings::human_bytes;
use crate::{table_hosts, table_rr, table_udp};

/// The per-flow table is shown up to this many flows.
pub const FLOW_TABLE_MAX: usize = 16;

/// Width of the summary's labels.
const LABEL: usize = 16;

/// The terminal exporter: reports ([`render`]), series ([`crate::table_series`]), comparisons
/// and store listings, as plain aligned text.
#[derive(Clone, Copy, Debug, Default)]
pub struct Table;

impl Exporter<Report> for Table {
    fn export(&self, r: &Report) -> Vec<u8> {
        render(r)
    }
}

/// The report as the terminal shows it.
pub fn render(r: &Report) -> Vec<u8> {
    let mut lines = vec![header(r)];
    if !r.intervals.is_empty() {
        let cols = Columns::of(r);
        lines.push(String::new());
        lines.push(cols.head());
        lines.extend(r.intervals.iter().map(|iv| cols.line(iv)));
    }
    lines.extend(after_intervals(r));
    let mut text = lines.join("\n");
    text.push('\n');
    text.into_bytes()
}

/// The table after its interval lines (for output whose intervals were printed as they came).
pub fn rest(r: &Report) -> Vec<u8> {
    let mut text = after_intervals(r).join("\n");
    text.push('\n');
    text.into_bytes()
}

/// The lines after the interval table: flows, hosts, WAN links, summary, warnings, error.
fn after_intervals(r: &Report) -> Vec<String> {
    let (rr, udp) = (r.summary.rr.is_some(), r.summary.udp.is_some());
    let mut lines = Vec::new();
    if !r.flows.is_empty() && r.flows.len() <= FLOW_TABLE_MAX {
        lines.push(String::new());
        lines.extend(match (rr, udp) {
            (true, _) => table_rr::flows(&r.flows, r.test.kind == "rr"),
            (_, true) => table_udp::flows(&r.flows),
            _ => flows(&r.flows),
        });
    }
    if r.hosts.len() > 2 {
        lines.push(String::new());
        lines.extend(table_hosts::hosts(r));
    }
    lines.extend(table_hosts::groups(&r.groups));
    lines.extend(table_hosts::wan(r));
    lines.push(String::new());
    lines.extend(summary(r));
    lines.extend(r.warnings.iter().map(|w| format!("warning: {w}")));
    lines.extend(r.error.iter().map(|e| format!("error: {e}")));
    lines
}

/// "wan h1-h2: h1 → h2: delay=25ms,...; h2 → h1: ...".
pub fn wan_line(w: &crate::model::WanLinkResult) -> String {
    format!(
        "wan {}: {} → {}: {}; {} → {}: {}",
        w.name, w.ends[0], w.ends[1], w.a_to_b, w.ends[1], w.ends[0], w.b_to_a
    )
}

/// The columns of an interval table, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// Bit rates and TCP state.
    Stream,
    /// Transactions and latency; `lossy` adds the lost column (UDP request/response).
    Rr {
        /// Show the lost column.
        lossy: bool,
    },
    /// Datagrams, loss and jitter.
    Udp,
}

impl Columns {
    /// The columns a finished report's intervals show.
    pub fn of(r: &Report) -> Columns {
        if r.summary.rr.is_some() {
            let lossy = r
                .intervals
                .iter()
                .flat_map(|iv| &iv.rr)
                .any(|rr| rr.lost.is_some());
            Columns::Rr { lossy }
        } else if r.summary.udp.is_some() {
            Columns::Udp
        } else {
            Columns::Stream
        }
    }

    /// The columns a plan's intervals will show.
    pub fn of_plan(plan: &fathom_proto::plan::TestPlan) -> Columns {
        let d = plan.kind.descriptor();
        if d.is_rr() {
            Columns::Rr {
                lossy: d.adds(fathom_proto::kind::Figure::Lost),
            }
        } else if plan.udp().is_some() {
            Columns::Udp
        } else {
            Columns::Stream
        }
    }

    /// The column heads.
    pub fn head(self) -> String {
        match self {
            Columns::Stream => stream_head(),
            Columns::Rr { lossy } => table_rr::head(lossy),
            Columns::Udp => table_udp::head(),
        }
    }

    /// One interval's line, under its time span (marked when it was warm-up).
    pub fn line(self, iv: &Interval) -> String {
        marked(self.row(&format!("{:.2}-{:.2}", iv.start, iv.end), iv), iv)
    }

    /// One interval's figures under `label`.
    pub fn row(self, label: &str, iv: &Interval) -> String {
        match self {
            Columns::Stream => stream_row(label, iv),
            Columns::Rr { lossy } => table_rr::row(label, iv, lossy),
            Columns::Udp => table_udp::row(label, iv),
        }
    }
}

/// "stream to HOST:PORT: 1 flow forward, 3 s window after 1 s warm-up, 1 s intervals".
pub fn header(r: &Report) -> String {
    let t = &r.test;
    let agent = if t.embedded_agent {
        format!("{} (embedded agent)", t.agent)
    } else {
        t.agent.clone()
    };
    let flows = match t.clients.len() {
        0 | 1 => crate::words::plural(t.parallel as u64, "flow"),
        n => format!(
            "{} ({} from each of {n} clients)",
            crate::words::plural(t.parallel as u64 * n as u64, "flow"),
            t.parallel
        ),
    };
    let shape = match t.direction.as_str() {
        "bidir" => format!("{flows} each way (bidir)"),
        dir => format!("{flows} {dir}"),
    };
    let limit = match (t.duration_s, t.bytes) {
        (Some(d), _) => format!("{} window", secs(d)),
        (None, Some(b)) => format!("{},", crate::words::bytes_limit(t, b)),
        (None, None) => "until done,".to_string(),
    };
    let warmup = if t.omit_s > 0.0 {
        format!("after {} warm-up", secs(t.omit_s))
    } else {
        "no warm-up".to_string()
    };
    format!(
        "{} to {agent}: {shape}, {limit} {warmup}, {} intervals",
        t.kind,
        secs(t.interval_s)
    )
}

/// The stream interval table's column heads.
fn stream_head() -> String {
    format!(
        "{:>11} {:>13} {:>13} {:>6} {:>9} {:>7} {:>10} {:>7}",
        "time", "receiver", "sender", "retr", "rtt", "cwnd", "cpu local", "remote"
    )
}

/// One stream interval's line under `label`.
fn stream_row(label: &str, iv: &Interval) -> String {
    format!(
        "{:>11} {:>13} {:>13} {:>6} {:>9} {:>7} {:>10} {:>7}",
        label,
        rate(iv.bits_per_second),
        rate(iv.sender_bits_per_second),
        iv.retransmits,
        rtt(iv.rtt_us),
        iv.cwnd,
        pct(iv.cpu_local),
        pct(iv.cpu_remote),
    )
}

/// `line`, with "  (omitted)" after it for a warm-up interval.
fn marked(line: String, iv: &Interval) -> String {
    if iv.omitted {
        line + "  (omitted)"
    } else {
        line
    }
}

/// "→" for a forward flow, "←" for a reverse one.
pub(crate) fn arrow(direction: &str) -> &'static str {
    if direction == "reverse" {
        "←"
    } else {
        "→"
    }
}

/// One line per flow over the measured window.
fn flows(list: &[FlowResult]) -> Vec<String> {
    let row = |c: [&str; 12]| {
        format!(
            "{:>4} {:^3} {:>13} {:>13} {:>10} {:>6} {:>9} {:>7} {:>9} {:>9} {:>8} {:>8}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
        )
    };
    let head = [
        "flow", "dir", "receiver", "sender", "bytes", "retr", "rtt", "cwnd", "segs/ack",
        "rwnd-lim", "sndbuf", "rcvbuf",
    ];
    let mut lines = vec![row(head)];
    lines.extend(list.iter().map(|f| {
        row([
            &f.id.to_string(),
            arrow(&f.direction),
            &rate(f.bits_per_second),
            &rate(f.sender_bits_per_second),
            &human_bytes(f.bytes),
            &f.retransmits.to_string(),
            &rtt(f.rtt_us.into()),
            &f.cwnd.to_string(),
            &format!("{:.2}", f.data_segs_per_ack),
            &pct(f.rwnd_limited_pct),
            &human_bytes(f.sndbuf.into()),
            &human_bytes(f.rcvbuf.into()),
        ])
    }));
    lines
}

/// The TLS lines: what was negotiated, then what it cost.
fn tls(t: &crate::model::tls::TlsSummary, item: &mut impl FnMut(&str, String)) {
    let mut what = format!(
        "TLS {} {}, records up to {} bytes",
        t.version, t.suite, t.record_size
    );
    if let Some(h) = &t.handshake_us {
        what += &format!(
            "; handshake {:.0} µs mean, {:.0} µs max over {} connection{}",
            h.mean,
            h.max,
            h.count,
            if h.count == 1 { "" } else { "s" }
        );
    }
    if let Some(hps) = t.handshakes_per_second {
        what += &format!("; {hps:.0} full handshakes/s");
    }
    item("tls", what);
    let mut cost = Vec::new();
    if let Some(c) = &t.cpu_s_per_gb {
        cost.push(format!(
            "CPU {:.3} s/GB local, {:.3} s/GB remote",
            c.local, c.remote
        ));
    }
    if let (Some(a), Some(w), Some(o)) = (t.application_bytes, t.wire_bytes, t.overhead_pct) {
        cost.push(format!(
            "{} on the wire for {} of data (+{o:.2}%)",
            human_bytes(w),
            human_bytes(a)
        ));
    }
    if !cost.is_empty() {
        item("tls cost", cost.join("; "));
    }
}

/// The figures over the measured window.
fn summary(r: &Report) -> Vec<String> {
    let s = &r.summary;
    let t = &s.tcp;
    let mut lines = vec![format!(
        "summary over the measured window ({})",
        secs(s.seconds)
    )];
    let mut item = |label: &str, text: String| lines.push(format!("  {label:<LABEL$}{text}"));
    if let Some(t) = &s.tls {
        tls(t, &mut item);
    }
    if let Some(rr) = &s.rr {
        table_rr::summary(r, rr, &mut item);
        item("cpu local", cpu(&s.cpu.local));
        item("cpu remote", cpu(&s.cpu.remote));
        return lines;
    }
    if let Some(u) = &s.udp {
        table_udp::summary(r, u, &mut item);
        item("recv buffer", buffers(&s.buffers, r).1);
        item("cpu local", cpu(&s.cpu.local));
        item("cpu remote", cpu(&s.cpu.remote));
        return lines;
    }
    item(
        "receiver",
        format!(
            "{}  (sender {})",
            rate(s.bits_per_second),
            rate(s.sender_bits_per_second)
        ),
    );
    item(
        "bytes",
        format!(
            "{} received in {}, {} sent",
            human_bytes(s.bytes),
            secs(s.seconds),
            human_bytes(s.sender_bytes)
        ),
    );
    item("retransmits", s.retransmits.to_string());
    if let Some(f) = &s.file {
        crate::file::table(f, s.bits_per_second, &mut item);
    }
    for d in &s.directions {
        item(&d.direction, direction(d));
    }
    item("cpu local", cpu(&s.cpu.local));
    item("cpu remote", cpu(&s.cpu.remote));
    let sd = &s.service_demand_us_per_kb;
    item(
        "service demand",
        format!("local {:.3} µs/KB, remote {:.3} µs/KB", sd.local, sd.remote),
    );
    let (send, recv) = buffers(&s.buffers, r);
    item("send buffer", send);
    item("recv buffer", recv);
    if r.summary.rr.is_none() {
        item("segs per ack", format!("{:.2}", t.data_segs_per_ack));
    }
    item(
        "rtt",
        format!("{} (variation {})", rtt(t.rtt_us), rtt(t.rttvar_us)),
    );
    item(
        "limited by",
        format!(
            "receive window {}, send buffer {} of the window",
            pct(t.rwnd_limited_pct),
            pct(t.sndbuf_limited_pct)
        ),
    );
    lines
}

/// One direction of a bidirectional test.
fn direction(d: &DirectionResult) -> String {
    format!(
        "{}  (sender {}), {}, {} retransmits",
        rate(d.bits_per_second),
        rate(d.sender_bits_per_second),
        human_bytes(d.bytes),
        d.retransmits
    )
}

/// "40.0% (user 13.0%, system 20.0%, softirq 7.0%), busiest cpu0 60.0%, fathom 0.90 s (15.0%)".
fn cpu(c: &Cpu) -> String {
    format!(
        "{} (user {}, system {}, softirq {}), busiest cpu{} {}, fathom {:.2} s ({})",
        pct(c.total),
        pct(c.user),
        pct(c.system),
        pct(c.softirq),
        c.busiest_cpu.cpu,
        pct(c.busiest_cpu.total),
        c.fathom_s,
        pct(c.fathom_percent)
    )
}

/// The send and receive buffer lines: requested (or autotuned), granted, at the end.
fn buffers(b: &Buffers, r: &Report) -> (String, String) {
    let h = &r.hosts;
    let line = |req: Option<u64>, max: u64, granted: u64, end: u64| {
        let asked = match req {
            Some(q) if b.clamped && q > max => {
                format!("{} requested, clamped by the kernel", human_bytes(q))
            }
            Some(q) => format!("{} requested", human_bytes(q)),
            None => "autotuned".to_string(),
        };
        format!(
            "{asked}: {} granted, {} at the end",
            human_bytes(granted),
            human_bytes(end)
        )
    };
    (
        line(
            b.requested.send,
            h.iter().map(|h| h.wmem_max).min().unwrap_or(0),
            b.effective_send,
            b.final_send,
        ),
        line(
            b.requested.recv,
            h.iter().map(|h| h.rmem_max).min().unwrap_or(0),
            b.effective_recv,
            b.final_recv,
        ),
    )
}

/// Bits per second with SI prefixes and four significant digits: "35.21 Gbit/s", "940.1 Mbit/s".
pub fn rate(bps: f64) -> String {
    const PREFIX: [&str; 5] = ["", "k", "M", "G", "T"];
    let mut v = if bps.is_finite() { bps.max(0.0) } else { 0.0 };
    let mut u = 0;
    while v >= if u == 0 { 999.5 } else { 999.95 } && u < PREFIX.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    let decimals = match v {
        _ if u == 0 => 0,
        v if v < 9.9995 => 3,
        v if v < 99.995 => 2,
        _ => 1,
    };
    format!("{v:.decimals$} {}bit/s", PREFIX[u])
}

/// A round-trip time: "140 µs" below a millisecond, "12.5 ms" above.
pub(crate) fn rtt(us: f64) -> String {
    if us < 999.5 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

/// A percentage with one decimal: "40.0%".
pub(crate) fn pct(p: f64) -> String {
    format!("{p:.1}%")
}

/// Seconds without needless zeros: "3 s", "1.5 s", "0.25 s".
fn secs(s: f64) -> String {
    let text = format!("{s:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_four_significant_digits() {
        assert_eq!(rate(35.21e9), "35.21 Gbit/s");
        assert_eq!(rate(940.1e6), "940.1 Mbit/s");
        assert_eq!(rate(8.8e9), "8.800 Gbit/s");
        assert_eq!(rate(999.96e6), "1.000 Gbit/s");
        assert_eq!(rate(512.0), "512 bit/s");
        assert_eq!(rate(0.0), "0 bit/s");
        assert_eq!(rate(f64::NAN), "0 bit/s");
    }

    #[test]
    fn seconds_and_rtts_read_naturally() {
        assert_eq!(secs(3.0), "3 s");
        assert_eq!(secs(1.5), "1.5 s");
        assert_eq!(secs(0.25), "0.25 s");
        assert_eq!(secs(0.0), "0 s");
        assert_eq!(rtt(140.0), "140 µs");
        assert_eq!(rtt(12_500.0), "12.5 ms");
    }
}
