//! `fathom lab status` as text: the hosts, switches, links and WAN links of a lab as aligned
//! tables, with its problems first.

use fathom_lab::{Status, WanLinkStatus};
use fathom_units::rate::format as format_rate;
use std::fmt::Write;

/// The status as a few aligned tables for a terminal.
pub fn render(status: &Status) -> String {
    let health = if status.stale { "STALE" } else { "ok" };
    let mut s = format!(
        "lab '{}' ({health}), state in {}\n",
        status.name,
        status.state_dir.display()
    );
    for p in &status.problems {
        writeln!(s, "  problem: {p}").unwrap();
    }
    let gone = |present: bool| if present { "" } else { " (gone)" };
    let hosts = status.hosts.iter().map(|h| {
        let charon = match &h.charon {
            Some(c) if !c.alive => format!(", charon pid {} DEAD", c.pid),
            Some(c) => format!(", charon pid {}", c.pid),
            None => String::new(),
        };
        let agent = match (h.agent.pid, h.agent.alive) {
            (Some(pid), true) => format!(":{} pid {pid}", h.agent.port),
            (Some(pid), false) => format!(":{} pid {pid} DEAD", h.agent.port),
            (None, _) => "not started".to_string(),
        };
        let netns = format!("{}{}", h.netns, gone(h.netns_present));
        vec![
            h.name.clone(),
            h.addresses.join(","),
            netns,
            agent + &charon,
        ]
    });
    table(&mut s, ["host", "address", "netns", "agent"], hosts);
    let switches = status.switches.iter().map(|sw| {
        let netns = format!("{}{}", sw.netns, gone(sw.netns_present));
        vec![sw.name.clone(), sw.subnet.clone(), netns]
    });
    table(&mut s, ["switch", "subnet", "netns"], switches);
    let links = status.links.iter().map(|l| {
        let rate = l.rate_bps.map_or("-".to_string(), format_rate);
        vec![
            format!("{} - {}", l.ends[0], l.ends[1]),
            l.mtu.to_string(),
            rate,
        ]
    });
    table(&mut s, ["link", "mtu", "rate"], links);
    wan_tables(&mut s, &status.wan);
    if let Some(ipsec) = &status.ipsec {
        ipsec_table(&mut s, ipsec);
    }
    s
}

/// Appends the encrypted links: suite, data path, SA states, counters and rekeys.
fn ipsec_table(out: &mut String, ipsec: &fathom_lab::ipsec::IpsecStatus) {
    let rows = ipsec.links.iter().map(|l| {
        vec![
            l.name.clone(),
            format!("{} {}", ipsec.suite, ipsec.datapath.name()),
            l.error
                .clone()
                .unwrap_or_else(|| format!("{} {}", l.ike_state, l.child_state)),
            format!("{} B, {} p", l.bytes_out, l.packets_out),
            format!("{} B, {} p", l.bytes_in, l.packets_in),
            l.rekeys.to_string(),
        ]
    });
    let header = [
        "ipsec link",
        "suite, ESP",
        "IKE, CHILD SA",
        "out",
        "in",
        "rekeys",
    ];
    table(out, header, rows);
}

/// Appends the WAN links: one table of links and forwarders, one of parameters and counters
/// per direction.
fn wan_tables(out: &mut String, links: &[WanLinkStatus]) {
    let rows = links.iter().map(|w| {
        let forwarder = match (w.forwarder.pid, w.forwarder.alive) {
            (Some(pid), true) => format!("pid {pid}"),
            (Some(pid), false) => format!("pid {pid} DEAD"),
            (None, _) => "not started".to_string(),
        };
        let gone = if w.netns_present { "" } else { " (gone)" };
        vec![
            w.name.clone(),
            format!("{} - {} - {}", w.ends[0], w.router, w.ends[1]),
            format!("{}{gone}", w.netns),
            forwarder,
        ]
    });
    table(out, ["wan link", "path", "netns", "forwarder"], rows);
    let rows = links.iter().flat_map(|w| {
        let [a, b] = &w.ends;
        let counters = w.counters.map(|c| [c.a_to_b, c.b_to_a]);
        [
            (
                format!("{a} -> {b}"),
                &w.params.a_to_b,
                counters.map(|c| c[0]),
            ),
            (
                format!("{b} -> {a}"),
                &w.params.b_to_a,
                counters.map(|c| c[1]),
            ),
        ]
        .map(|(direction, params, c)| {
            let mut row = vec![w.name.clone(), direction, summary(params)];
            row.extend(match c {
                Some(c) => [
                    c.forwarded.to_string(),
                    c.delayed.to_string(),
                    format!(
                        "{}/{}/{}",
                        c.dropped_loss,
                        c.dropped_queue,
                        c.dropped_oversize
                            + c.dropped_overflow
                            + c.dropped_ring
                            + c.dropped_tx_error
                    ),
                    format!("{} p, {} B", c.queue_peak_packets, c.queue_peak_bytes),
                ],
                None => ["-", "-", "-", "-"].map(str::to_string),
            });
            row
        })
    });
    table(
        out,
        [
            "wan link",
            "direction",
            "params",
            "forwarded",
            "delayed",
            "dropped loss/queue/other",
            "queue peak",
        ],
        rows,
    );
}

/// Appends a blank line and a left-aligned table with `header`, unless `rows` is empty.
fn table<const N: usize>(
    out: &mut String,
    header: [&str; N],
    rows: impl Iterator<Item = Vec<String>>,
) {
    let rows: Vec<Vec<String>> = rows.collect();
    if rows.is_empty() {
        return;
    }
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let header = header.map(str::to_string).to_vec();
    out.push('\n');
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end()).unwrap();
    }
}

/// The short form of a WAN parameter text: only what differs from a plain wire
/// (`delay=25ms,rate=1G`), or `plain wire`.
pub fn summary(text: &str) -> String {
    let short = text
        .parse::<fathom_wan::LinkParams>()
        .map_or_else(|_| text.to_string(), |p| p.summary());
    if short.is_empty() {
        "plain wire".to_string()
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_lab::{AgentStatus, HostStatus, LinkStatus};

    #[test]
    fn a_stale_lab_says_so_and_names_the_dead_agent() {
        let st = Status {
            schema_version: fathom_lab::STATUS_SCHEMA_VERSION,
            name: "t".into(),
            state_dir: "/run/fathom/lab/t".into(),
            complete: true,
            stale: true,
            problems: vec!["agent of host h1 is gone".into()],
            hosts: vec![HostStatus {
                name: "h1".into(),
                netns: "fl-t-h1".into(),
                netns_present: false,
                addresses: vec!["10.77.0.1/16".into()],
                agent: AgentStatus {
                    port: 5301,
                    pid: Some(42),
                    alive: false,
                },
                charon: None,
            }],
            switches: Vec::new(),
            links: vec![LinkStatus {
                ends: ["h1:eth0".into(), "sw1:h1".into()],
                mtu: 1500,
                rate_bps: Some(2_500_000_000),
            }],
            wan: Vec::new(),
            ipsec: None,
        };
        let text = render(&st);
        assert!(text.starts_with("lab 't' (STALE)"), "{text}");
        assert!(
            text.contains("  problem: agent of host h1 is gone"),
            "{text}"
        );
        assert!(text.contains("fl-t-h1 (gone)  :5301 pid 42 DEAD"), "{text}");
        assert!(text.contains("h1:eth0 - sw1:h1  1500  2500M"), "{text}");
    }
}
