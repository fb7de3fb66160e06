//! The terminal table's multi-host parts: one row per host, the cross-host aggregate, one line
//! per group of client hosts, and the lab's WAN links with what their forwarders cost.

use crate::cells::wan_line;
use crate::floor::text::{human_bytes, pct, rate};
use crate::model::{GroupResult, Report};

/// One line per host of a multi-host test, then the cross-host figures. Request/response
/// kinds show each host's transactions/s where the others show its throughput.
pub(crate) fn hosts(r: &Report) -> Vec<String> {
    let rr = r.summary.rr().is_some();
    let (first, second) = if rr {
        ("tx/s", "")
    } else {
        ("receiver", "sender")
    };
    let mut lines = vec![format!(
        "{:<16} {:<7} {:>13} {:>13} {:>8} {:>13} {:>10} {:>11}",
        "host", "role", first, second, "cpu", "busiest cpu", "offset", "first byte"
    )];
    lines.extend(r.hosts.iter().map(|h| {
        let (first, second) = match h.transactions_per_second {
            Some(tps) if rr => (
                format!("{:.0}/s", if tps > 0.0 { tps } else { 0.0 }),
                String::new(),
            ),
            _ if rr => ("-".into(), String::new()),
            _ => (rate(h.bits_per_second), rate(h.sender_bits_per_second)),
        };
        format!(
            "{:<16} {:<7} {:>13} {:>13} {:>8} {:>13} {:>10} {:>11}",
            h.name,
            h.role,
            first,
            second,
            pct(h.cpu.total),
            format!(
                "cpu{} {}",
                h.cpu.busiest_cpu.cpu,
                pct(h.cpu.busiest_cpu.total)
            ),
            format!("{:.0} µs", h.clock_offset_us),
            h.first_send_us
                .map_or("-".into(), |us| format!("{us:.0} µs")),
        )
    }));
    let s = &r.summary;
    lines.push(format!(
        "aggregate {} (total bytes / overall time), {} while all flows ran{}",
        rate(s.aggregate_bits_per_second),
        rate(s.overlap_bits_per_second),
        s.start_skew_us
            .map_or(String::new(), |us| format!(", start skew {us:.0} µs")),
    ));
    lines
}

/// One line per group of client hosts: its flows' total bytes over their overall time.
pub(crate) fn groups(groups: &[GroupResult]) -> Vec<String> {
    groups
        .iter()
        .map(|g| {
            format!(
                "group {:<10} {:>3} {:<5} {:>13} ({} over {:.2} s, total bytes / overall time)",
                g.name,
                g.hosts,
                if g.hosts == 1 { "host" } else { "hosts" },
                rate(g.bits_per_second),
                human_bytes(g.bytes),
                g.seconds
            )
        })
        .collect()
}

/// One line per WAN link of the lab, and the CPU its user-space forwarder used in the window,
/// shown apart: the lab's hosts share the machine, so their CPU figures hold it too.
pub(crate) fn wan(r: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    for w in &r.wan {
        lines.push(wan_line(w));
        if let Some(c) = crate::metric::forwarder_window_cpu_s(r, w) {
            lines.push(format!(
                "wan {}: its forwarder used {:.2} CPU-s in the window ({} of a CPU), counted in the CPU figures of the machine the lab's hosts share",
                w.name,
                c,
                pct(crate::floor::ratio(c * 100.0, r.summary.seconds))
            ));
        }
    }
    lines.extend(r.ipsec.iter().flat_map(ipsec));
    lines
}

/// One line per encrypted lab link: suite, where ESP ran, what its SAs carried, and the CPU
/// the lab's charons used.
fn ipsec(i: &crate::model::IpsecResult) -> Vec<String> {
    let path = match i.datapath.as_str() {
        "userspace" => "in user space (strongSwan's charon, not fathom)",
        _ => "in the kernel",
    };
    let cpu = i
        .charon_cpu_s
        .map_or(String::new(), |c| format!("; charon used {c:.2} CPU-s"));
    i.links
        .iter()
        .map(|l| {
            let (out, inb) = l.bytes();
            format!(
                "ipsec {}: {}, ESP {path}: its SA carried {} out, {} in{cpu}",
                l.name,
                i.suite,
                human_bytes(out),
                human_bytes(inb)
            )
        })
        .collect()
}
