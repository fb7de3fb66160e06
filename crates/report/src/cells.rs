//! The terminal table's cells, shared by every kind's section: rates, times, percentages,
//! CPU and buffer lines.

use crate::model::{Buffers, Cpu, DirectionResult, PeerCpu, Report, WanLinkResult};
use crate::section::Item;
use crate::warnings::human_bytes;

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
pub(crate) fn secs(s: f64) -> String {
    let text = format!("{s:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

/// "→" for a forward flow, "←" for a reverse one.
pub(crate) fn arrow(direction: &str) -> &'static str {
    if direction == "reverse" {
        "←"
    } else {
        "→"
    }
}

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
