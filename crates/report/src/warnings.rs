//! Warnings: what the figures suggest the user do, each naming the setting to change.

pub mod bound;

use crate::floor::text::human_bytes;
use crate::model::{FlowResult, Report};
use crate::run::RunData;
use fathom_proto::kind::KindId;
use fathom_proto::sample::{BufferLimits, EndpointInfo};

/// Share of the window beyond which a limit is worth a warning, %.
pub const LIMITED_PCT: f64 = 25.0;

/// All warnings for a finished report.
pub fn collect(run: &RunData, r: &Report) -> Vec<String> {
    let mut w = Vec::new();
    let s = &run.plan.socket;
    let view = crate::run::View::new(run);
    for (i, end) in run.ends.iter().enumerate() {
        if view.located.iter().flatten().any(|l| l.sender.0 == i) {
            clamp(&mut w, &end.name, &end.info, Buf::Send, s.sndbuf);
        }
        if view.located.iter().flatten().any(|l| l.receiver.0 == i) {
            clamp(&mut w, &end.name, &end.info, Buf::Recv, s.rcvbuf);
        }
    }
    // Defaults an end chose for its path, said once (ends on one machine choose alike); a send
    // buffer chosen so is no limit to warn about.
    let mut chosen: Vec<&String> = run.ends.iter().flat_map(|e| &e.info.defaults).collect();
    chosen.sort();
    chosen.dedup();
    w.extend(chosen.iter().map(|d| d.to_string()));
    let t = &r.summary.tcp;
    let limits = &run.server().info.limits;
    if t.rwnd_limited_pct > LIMITED_PCT {
        let pct = t.rwnd_limited_pct;
        w.extend(match s.rcvbuf {
            Some(_) => Some(limited(Buf::Recv, pct, s.rcvbuf, limits)),
            None => bound::window_without_request(run, r, pct),
        });
    }
    let sndbuf_chosen = run.ends.iter().any(|e| e.info.chosen_sndbuf.is_some());
    if t.sndbuf_limited_pct > LIMITED_PCT && !sndbuf_chosen {
        w.push(limited(Buf::Send, t.sndbuf_limited_pct, s.sndbuf, limits));
    }
    if let Some(msg) = nagle_held(r) {
        w.push(msg);
    }
    w.extend(one_segment_buffer(&r.flows));
    w.extend(gso_uncut(run, r));
    w.extend(shared_cpu(r));
    // Ends on one machine (loopback, a lab) see the same CPUs: warn about each machine once.
    let span_s: Vec<f64> = run
        .ends
        .iter()
        .map(|e| e.snaps.last().map_or(0.0, |s| s.t_ns.max(0) as f64 / 1e9))
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for (i, h) in r.hosts.iter().enumerate() {
        if !seen.contains(&h.hostname.as_str()) {
            w.extend(bound::saturated(&r.hosts, i, &span_s));
            seen.push(&h.hostname);
        }
    }
    w
}

/// A request/response test whose two ends ran on one machine and shared a CPU: say so, since
/// a transaction then never wakes another CPU, and where the ends land changed transactions/s
/// 5-16x on loopback (bench/RESULTS.md, "rr placement on loopback, issue 36"). A worker's CPU is
/// the one it was pinned to, else the one it was last seen on.
fn shared_cpu(r: &Report) -> Option<String> {
    let [a, b] = r.hosts.as_slice() else {
        return None;
    };
    if r.test.rr().is_none() || a.hostname != b.hostname {
        return None;
    }
    let cpus = |h: &crate::model::HostResult| -> Vec<(u32, bool)> {
        h.threads
            .iter()
            .filter(|t| t.flows > 0)
            .map(|t| (t.pinned_cpu.unwrap_or(t.last_cpu), t.pinned_cpu.is_some()))
            .collect()
    };
    let (ours, theirs) = (cpus(a), cpus(b));
    let mut shared: Vec<(u32, bool)> = ours
        .iter()
        .filter_map(|&(c, pinned)| {
            let other = theirs.iter().find(|(t, _)| *t == c)?;
            Some((c, pinned && other.1))
        })
        .collect();
    shared.sort_unstable();
    shared.dedup_by_key(|s| s.0);
    if shared.is_empty() {
        return None;
    }
    let list: Vec<String> = shared.iter().map(|(c, _)| c.to_string()).collect();
    let how = if shared.iter().all(|s| s.1) {
        "pinned there"
    } else {
        "last seen there; unpinned, they may also have run apart"
    };
    Some(format!(
        "both ends shared CPU {} ({how}): a transaction then never wakes another CPU, which no \
         network path gives (on one machine transactions/s change 5-16x with where the ends \
         run); --affinity 0/1 puts them on CPUs of their own, as between two hosts",
        list.join(",")
    ))
}

#[derive(Clone, Copy)]
enum Buf {
    Send,
    Recv,
}

/// The warning for senders limited by a buffer (`which`) `pct`% of the time: the setting to
/// raise, the flag's limit if it was set (`req`), else the kernel's autotuning maximum.
fn limited(which: Buf, pct: f64, req: Option<u32>, l: &BufferLimits) -> String {
    let (limit, flag, mem, core_max, tcp_max) = match which {
        Buf::Send => (
            "their send buffer",
            "--sndbuf",
            "wmem",
            l.wmem_max,
            l.tcp_wmem[2],
        ),
        Buf::Recv => (
            "the receive window",
            "--rcvbuf",
            "rmem",
            l.rmem_max,
            l.tcp_rmem[2],
        ),
    };
    let how = match req {
        Some(_) => format!(
            "raise --buffer/{flag} (net.core.{mem}_max is {})",
            human_bytes(core_max)
        ),
        None => format!(
            "autotuning stops at net.ipv4.tcp_{mem}'s maximum ({}): raise it, or set --buffer",
            human_bytes(tcp_max)
        ),
    };
    format!("senders were limited by {limit} {pct:.0}% of the time: {how}")
}

fn clamp(w: &mut Vec<String>, end: &str, e: &EndpointInfo, which: Buf, req: Option<u32>) {
    let Some(req) = req else { return };
    let (flag, opt, sysctl, max) = match which {
        Buf::Send => ("--sndbuf", "SO_SNDBUF", "wmem_max", e.limits.wmem_max),
        Buf::Recv => ("--rcvbuf", "SO_RCVBUF", "rmem_max", e.limits.rmem_max),
    };
    if u64::from(req) <= max {
        return;
    }
    let granted = e.flows.first().map_or(0, |f| match which {
        Buf::Send => f.sndbuf,
        Buf::Recv => f.rcvbuf,
    });
    w.push(format!(
        "{flag} {}: {end} ({}) granted {opt} {} instead of {} because net.core.{sysctl} = {max} caps requests (Linux doubles what it grants); raise it: sysctl -w net.core.{sysctl}={req}",
        human_bytes(req.into()),
        e.host.hostname,
        human_bytes(granted.into()),
        human_bytes(2 * u64::from(req)),
    ));
}

/// Open-loop TCP rr with Nagle on and delayed ACKs: a response written while the previous one is
/// still unacknowledged waits in the answering socket until the asking side's next request
/// carries that ACK, so every transaction takes about one schedule period. The latency is real
/// (any application with these settings sees it), but it is the socket options', not the path's.
fn nagle_held(r: &Report) -> Option<String> {
    let (p50, period_us) = held_by_schedule(r)?;
    Some(format!(
        "the median latency ({p50:.0} µs) is about one schedule period ({period_us:.0} µs): with Nagle on, each response waited in the answering socket for the delayed ACK of the one before; add --nodelay (or --quickack) to measure the path without it"
    ))
}

/// The median latency and the schedule period, µs, of an open-loop rr test (one TCP connection
/// per flow, not crr nor udp_rr) with Nagle on whose median is at least half that period: the
/// check behind [`nagle_held`]'s warning, from the report alone, which the advisor reuses.
pub fn held_by_schedule(r: &Report) -> Option<(f64, f64)> {
    let t = &r.test;
    let rate = t.rr()?.rate?;
    let p50 = r.summary.rr()?.latency_us.as_ref()?.p50;
    let one_tcp_connection = KindId::from_name(&t.kind)
        .is_some_and(|k| crate::sections::rr::one_connection(k.descriptor()));
    if !one_tcp_connection || t.nodelay || t.quickack || rate <= 0.0 {
        return None;
    }
    // Askers per direction: each client host's connections, on every client host.
    let askers = t.parallel.max(1) as usize * t.clients.len().max(1);
    let period_us = 1e6 * askers as f64 / rate;
    (p50 >= period_us / 2.0).then_some((p50, period_us))
}

/// A send buffer that holds about one segment: the sender can put one full segment in flight,
/// the receiver delays its ACK of a lone segment (Linux acknowledges at once only past one full
/// segment), and every segment waits out the delayed-ACK timer (40 ms). Loopback's 64 KB MSS
/// makes this happen at `--sndbuf 32K` (granted 64 KB); a capture on lo showed one 65,483-byte
/// segment, then its ACK 44 ms later, throughout.
fn one_segment_buffer(flows: &[FlowResult]) -> Option<String> {
    let f = flows
        .iter()
        .find(|f| f.mss > 0 && f.sndbuf > 0 && 2 * u64::from(f.sndbuf) < 3 * u64::from(f.mss))?;
    Some(format!(
        "the send buffer ({} granted) holds one segment of {} bytes (the path's MSS): each segment waits for the receiver's delayed ACK (about 40 ms), which bounds the rate, not the path; give --sndbuf at least 2 x MSS ({}K) to measure the path",
        human_bytes(f.sndbuf.into()),
        f.mss,
        (2 * u64::from(f.mss)).div_ceil(1024)
    ))
}

/// GSO figures made where no device cuts the super-packets: loopback, and a path with no
/// emulator (a veth pair passes them whole). The receiver's datagrams are UDP_SEGMENT's segments
/// handed over by GRO; they never existed as packets, so the rate is no packet rate a NIC
/// would carry. Across the lab's emulator each one was a frame (its counters show them).
fn gso_uncut(run: &RunData, r: &Report) -> Option<String> {
    if !run.plan.udp().is_some_and(|u| u.gso) || !run.wan.is_empty() {
        return None;
    }
    let loopback = r.flows.iter().any(|f| {
        f.receiver
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback())
    });
    let cause = match loopback {
        true => "on loopback no device cuts GSO's super-packets",
        false => "no emulator on this path counted its packets, and a veth pair (a lab link without WAN settings) passes GSO's super-packets whole, as loopback does",
    };
    Some(format!(
        "--gso: {cause}: the datagrams counted are the segments the receiver's GRO handed over, not packets that crossed a wire, so this is no packet rate a NIC would carry; across a NIC, or the lab's emulator (a WAN link, whose frame counters show each packet), every datagram is a packet"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(sndbuf: u32, mss: u32) -> FlowResult {
        FlowResult {
            sndbuf,
            mss,
            ..FlowResult::default()
        }
    }

    #[test]
    fn request_response_ends_sharing_a_cpu_are_named() {
        let mut r = crate::build(&crate::fake::run_data(1, false));
        assert_eq!(shared_cpu(&r), None, "a stream says nothing");
        r.test.section = Some(crate::model::KindTest::Rr(Default::default()));
        for h in &mut r.hosts {
            h.hostname = "one".into();
            h.threads = vec![crate::model::ThreadResult {
                pinned_cpu: Some(0),
                last_cpu: 0,
                flows: 1,
                cpu_s: 1.0,
            }];
        }
        let note = shared_cpu(&r).expect("a note");
        assert!(
            note.starts_with("both ends shared CPU 0 (pinned there): ")
                && note.contains("--affinity 0/1"),
            "{note}"
        );
        r.hosts[1].threads[0].pinned_cpu = None;
        let note = shared_cpu(&r).expect("a note");
        assert!(note.contains("(last seen there; unpinned"), "{note}");
        r.hosts[1].threads[0].last_cpu = 1;
        assert_eq!(shared_cpu(&r), None, "apart");
        r.hosts[1].threads[0].last_cpu = 0;
        r.hosts[1].hostname = "two".into();
        assert_eq!(shared_cpu(&r), None, "two machines");
    }

    #[test]
    fn a_send_buffer_of_one_segment_is_named() {
        let w = one_segment_buffer(&[flow(65_536, 65_483)]).unwrap();
        assert!(
            w.contains("64 KB granted") && w.contains("65483 bytes"),
            "{w}"
        );
        assert!(w.contains("--sndbuf at least 2 x MSS (128K)"), "{w}");
        assert_eq!(one_segment_buffer(&[flow(98_304, 65_483)]), None);
        assert_eq!(one_segment_buffer(&[flow(16_384, 1448)]), None);
        assert_eq!(one_segment_buffer(&[flow(0, 0)]), None);
    }
}
