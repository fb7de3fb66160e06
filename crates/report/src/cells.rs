//! The terminal table's cells, shared by every kind's section: rates, times, percentages,
//! CPU and buffer lines.

use crate::floor::text::{human_bytes, pct, rate};
use crate::model::{Buffers, Cpu, DirectionResult, PeerCpu, Report, WanLinkResult};

/// One labelled summary line's printer.
pub type Item<'a> = dyn FnMut(&str, String) + 'a;

/// One direction of a bidirectional test.
pub(crate) fn direction(d: &DirectionResult) -> String {
    format!(
        "{}  (sender {}), {}, {} retransmits",
        rate(d.bits_per_second),
        rate(d.sender_bits_per_second),
        human_bytes(d.bytes),
        d.retransmits
    )
}

/// "40.0% (user 13.0%, system 20.0%, softirq 7.0%), busiest cpu0 60.0%, fathom 0.90 s (15.0%)";
/// for an iperf3 peer, only what it said of its process.
pub(crate) fn cpu(c: &Cpu) -> String {
    if let Some(p) = &c.iperf3 {
        return peer_cpu(p);
    }
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

/// "iperf3's process 12.0% of its wall time (user 2.0%, system 10.0%), host not measured",
/// with only the figures the peer sent.
fn peer_cpu(p: &PeerCpu) -> String {
    let parts: Vec<String> = [("user", p.user), ("system", p.system)]
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| format!("{name} {}", pct(v))))
        .collect();
    let mut out = match p.total {
        Some(t) => format!("iperf3's process {} of its wall time", pct(t)),
        None => "iperf3's process".to_string(),
    };
    if !parts.is_empty() {
        out += &format!(" ({})", parts.join(", "));
    }
    if p.total.is_none() && parts.is_empty() {
        out += " sent no CPU figures";
    }
    out + ", host not measured"
}

/// The "service demand" line; a side fathom did not measure (an iperf3 peer) says so.
pub(crate) fn service_demand(r: &Report) -> String {
    let (c, sd) = (&r.summary.cpu, &r.summary.service_demand_us_per_kb);
    let side = |c: &Cpu, v: f64| match c.iperf3 {
        Some(_) => "not measured".to_string(),
        None => format!("{v:.3} µs/KB"),
    };
    format!(
        "local {}, remote {}",
        side(&c.local, sd.local),
        side(&c.remote, sd.remote)
    )
}

/// The "cpu local" and "cpu remote" lines.
pub(crate) fn cpu_lines(r: &Report, item: &mut Item<'_>) {
    item("cpu local", cpu(&r.summary.cpu.local));
    item("cpu remote", cpu(&r.summary.cpu.remote));
}

/// The send and receive buffer lines: requested (or autotuned), granted, at the end.
pub(crate) fn buffers(b: &Buffers, r: &Report) -> (String, String) {
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

/// "wan h1-h2: h1 → h2: delay=25ms,...; h2 → h1: ...".
pub fn wan_line(w: &WanLinkResult) -> String {
    format!(
        "wan {}: {} → {}: {}; {} → {}: {}",
        w.name, w.ends[0], w.ends[1], w.a_to_b, w.ends[1], w.ends[0], w.b_to_a
    )
}
