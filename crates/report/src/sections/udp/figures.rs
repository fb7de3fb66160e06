//! UDP stream figures: datagrams at both ends, loss, duplicates, reordering and jitter from the
//! receivers' accounting, CPU per datagram, and where the missing datagrams went.

use crate::cpu::busy_us;
use crate::floor::ratio;
use crate::model::udp::{Missing, OneWayDelay, PerEnd};
use crate::model::{
    FlowResult, KindFlow, KindSummary, ServiceDemand, Summary, UdpFlow, UdpInterval, UdpSummary,
    UdpTest,
};
use crate::run::{View, Window};
use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::sample::Snapshot;
use fathom_proto::udp::{UdpCounters, UdpHostCounters};

/// The UDP stream options as run, for the kinds that have them.
pub fn echo(p: &TestPlan) -> Option<UdpTest> {
    let u = p.udp()?;
    Some(UdpTest {
        size: u.size,
        batch: u.batch,
        rate_bps: u.rate_bps,
        pps: u.datagrams_per_second(),
        blast: u.blast,
        gso: u.gso,
        datagrams: match p.limit {
            Limit::Datagrams(n) => Some(n),
            _ => None,
        },
    })
}

/// Counters of `b` minus those of `a`; the gauges (jitter, largest reorder distance) as in `b`.
fn delta(a: Option<UdpCounters>, b: Option<UdpCounters>) -> UdpCounters {
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    UdpCounters {
        datagrams_sent: b.datagrams_sent.saturating_sub(a.datagrams_sent),
        datagrams: b.datagrams.saturating_sub(a.datagrams),
        lost: b.lost.saturating_sub(a.lost),
        duplicates: b.duplicates.saturating_sub(a.duplicates),
        reordered: b.reordered.saturating_sub(a.reordered),
        calls: b.calls.saturating_sub(a.calls),
        rxq_overflow: b.rxq_overflow.saturating_sub(a.rxq_overflow),
        messages: b.messages.saturating_sub(a.messages),
        transit_sum_ns: b.transit_sum_ns.wrapping_sub(a.transit_sum_ns),
        transits: b.transits.saturating_sub(a.transits),
        ..b
    }
}

/// What the receiver counted: (sequence figures, jitter).
fn countable(p: &TestPlan) -> (bool, bool) {
    p.udp()
        .map_or((false, false), |u| (u.sequenced(), u.stamped()))
}

/// One flow's (sender, receiver) counters over the windows, the windows, and the ends.
struct Pair<'a> {
    sent: UdpCounters,
    recv: UdpCounters,
    /// Sent minus received (duplicates not counted) over the whole test, from the last
    /// snapshots: what never arrived, with no window edge in the way.
    missing_whole: u64,
    rw: Window<'a>,
    sw: Window<'a>,
    /// (sender, receiver) end indices.
    ends: (usize, usize),
}

impl Pair<'_> {
    /// Sent in the window and never received: sent minus received in the window, without
    /// those the whole test's totals show arrived after it (the one definition of lost).
    fn missing(&self) -> u64 {
        arrived_short(&self.sent, &self.recv).min(self.missing_whole)
    }
}

fn pairs<'a>(v: &View<'a>) -> Vec<Option<Pair<'a>>> {
    v.located
        .iter()
        .map(|l| {
            let l = l.as_ref()?;
            let (sw, rw) = (v.window(l.sender.0)?, v.window(l.receiver.0)?);
            let ((s0, s1), (r0, r1)) = (sw.flow(l.sender.1), rw.flow(l.receiver.1));
            let last = |w: &Window<'_>, pos: usize| {
                w.last
                    .flows
                    .get(pos)
                    .and_then(|f| f.udp())
                    .unwrap_or_default()
            };
            let (sent, recv) = (last(&sw, l.sender.1), last(&rw, l.receiver.1));
            Some(Pair {
                sent: delta(s0.udp(), s1.udp()),
                recv: delta(r0.udp(), r1.udp()),
                missing_whole: arrived_short(&sent, &recv),
                rw,
                sw,
                ends: (l.sender.0, l.receiver.0),
            })
        })
        .collect()
}

/// Fills the UDP sections of the summary and the flows.
pub fn fill(v: &View<'_>, summary: &mut Summary, flows: &mut [FlowResult]) {
    let run = v.run;
    if run.plan.udp().is_none() {
        return;
    }
    let (seq, stamped) = countable(&run.plan);
    let all = pairs(v);
    let mut total = (UdpCounters::default(), UdpCounters::default());
    let (mut rx_rate, mut tx_rate, mut jitter, mut n) = (0.0, 0.0, 0.0, 0usize);
    let mut calls = PerEnd::default();
    for (flow, p) in flows.iter_mut().zip(&all) {
        let Some(p) = p else { continue };
        let (s, r) = (&p.sent, &p.recv);
        let rate = ratio(r.datagrams as f64, p.rw.seconds());
        rx_rate += rate;
        tx_rate += ratio(s.datagrams_sent as f64, p.sw.seconds());
        calls.sender += ratio(s.calls as f64, p.sw.seconds());
        calls.receiver += ratio(r.calls as f64, p.rw.seconds());
        jitter += r.jitter_ns as f64 / 1e3;
        n += 1;
        add(&mut total.0, s);
        add(&mut total.1, r);
        total.1.reorder_max = total.1.reorder_max.max(r.reorder_max);
        flow.section = Some(KindFlow::Udp(UdpFlow {
            datagrams: r.datagrams,
            datagrams_per_second: rate,
            sender_datagrams: s.datagrams_sent,
            lost: seq.then_some(p.missing()),
            duplicates: seq.then_some(r.duplicates),
            reordered: seq.then_some(r.reordered),
            reorder_max_distance: seq.then_some(r.reorder_max),
            jitter_us: stamped.then_some(r.jitter_ns as f64 / 1e3),
            socket_rxq_overflow: r.rxq_overflow,
        }));
    }
    let (s, r) = total;
    let missing = missing(v, &all, &s, r);
    let lost = missing.datagrams;
    let expected = (r.datagrams + lost).saturating_sub(r.duplicates);
    let client = run.ends.len().min(2) - 1;
    let per_datagram = |i: usize| {
        v.window(i).map_or(0.0, |w| {
            ratio(busy_us(&run.ends[i], &w) * 1e3, r.datagrams as f64)
        })
    };
    summary.section = Some(KindSummary::Udp(UdpSummary {
        datagrams: r.datagrams,
        datagrams_per_second: rx_rate,
        sender_datagrams: s.datagrams_sent,
        sender_datagrams_per_second: tx_rate,
        lost: seq.then_some(lost),
        lost_percent: seq.then(|| ratio(lost as f64 * 100.0, expected as f64)),
        duplicates: seq.then_some(r.duplicates),
        reordered: seq.then_some(r.reordered),
        reorder_max_distance: seq.then_some(r.reorder_max),
        jitter_us: stamped.then(|| ratio(jitter, n as f64)),
        datagrams_per_call: PerEnd {
            sender: ratio(s.datagrams_sent as f64, s.calls as f64),
            receiver: ratio(r.datagrams as f64, r.calls as f64),
        },
        calls_per_second: calls,
        datagrams_per_message: PerEnd {
            sender: ratio(s.datagrams_sent as f64, s.messages as f64),
            receiver: ratio(r.datagrams as f64, r.messages as f64),
        },
        one_way_delay: stamped.then(|| one_way_delay(v, &all)).flatten(),
        cpu_ns_per_datagram: ServiceDemand {
            local: per_datagram(client),
            remote: per_datagram(0),
        },
        missing,
    }));
}

/// The mean one-way delay over the flows' stamped datagrams, each flow's transits corrected by
/// its ends' clock offsets (none when the controller, agent and flows share one process).
fn one_way_delay(v: &View<'_>, all: &[Option<Pair<'_>>]) -> Option<OneWayDelay> {
    let ends = &v.run.ends;
    let shared = v.run.embedded && ends.len() <= 2;
    let (mut sum, mut n, mut error) = (0f64, 0u64, 0f64);
    for p in all.iter().flatten().filter(|p| p.recv.transits > 0) {
        let (s, r) = (&ends[p.ends.0], &ends[p.ends.1]);
        let skew = match shared {
            true => 0.0,
            false => {
                let rtt = (s.control_rtt_ns + r.control_rtt_ns) as f64 / 2.0;
                error = error.max(rtt / 1e3);
                (r.clock_offset_ns - s.clock_offset_ns) as f64
            }
        };
        sum += p.recv.transit_sum_ns as f64 - skew * p.recv.transits as f64;
        n += p.recv.transits;
    }
    (n > 0).then(|| OneWayDelay {
        mean_us: sum / n as f64 / 1e3,
        clock: if shared { "shared" } else { "estimated" }.into(),
        error_us: error,
    })
}

fn add(into: &mut UdpCounters, c: &UdpCounters) {
    into.datagrams_sent += c.datagrams_sent;
    into.datagrams += c.datagrams;
    into.lost += c.lost;
    into.duplicates += c.duplicates;
    into.reordered += c.reordered;
    into.calls += c.calls;
    into.rxq_overflow += c.rxq_overflow;
    into.messages += c.messages;
    into.transit_sum_ns = into.transit_sum_ns.wrapping_add(c.transit_sum_ns);
    into.transits += c.transits;
}

/// A host counter's change over an end's window.
fn host_delta(w: &Window<'_>, pick: fn(&UdpHostCounters) -> u64) -> u64 {
    match (w.start.udp_host(), w.end.udp_host()) {
        (Some(a), Some(b)) => pick(&b).saturating_sub(pick(&a)),
        _ => 0,
    }
}

/// The sender's datagrams minus the receiver's, duplicates not counted.
fn arrived_short(s: &UdpCounters, r: &UdpCounters) -> u64 {
    s.datagrams_sent
        .saturating_sub(r.datagrams.saturating_sub(r.duplicates))
}

/// Sent minus received, split by cause; each host's counters are counted once per host. The
/// kernel counts a dropped message once, so with GSO a receive-buffer drop stands for the
/// datagrams a message held on average (`s`: the senders' counters).
fn missing(v: &View<'_>, all: &[Option<Pair<'_>>], s: &UdpCounters, r: UdpCounters) -> Missing {
    let sent = s.datagrams_sent;
    let per_drop = match v.run.plan.udp().is_some_and(|u| u.gso) {
        true => ratio(sent as f64, s.messages as f64).max(1.0),
        false => 1.0,
    };
    let ends = |side: fn(&crate::run::Located) -> usize| {
        let mut e: Vec<usize> = v.located.iter().flatten().map(side).collect();
        e.sort_unstable();
        e.dedup();
        e
    };
    let sum = |ends: &[usize], pick: fn(&UdpHostCounters) -> u64| -> u64 {
        let mut seen: Vec<&str> = Vec::new();
        ends.iter()
            .filter(|&&i| {
                let h = v.run.ends[i].info.host.hostname.as_str();
                let new = !seen.contains(&h);
                seen.push(h);
                new
            })
            .filter_map(|&i| v.window(i))
            .map(|w| host_delta(&w, pick))
            .sum()
    };
    let (receivers, senders) = (ends(|l| l.receiver.0), ends(|l| l.sender.0));
    let rcvbuf = sum(&receivers, |c| c.rcvbuf_errors);
    let sndbuf = sum(&senders, |c| c.sndbuf_errors);
    // Datagrams sent in the window but read after it closed arrived: the whole test's totals
    // say so, and they are counted apart, not as missing.
    let window = arrived_short(s, &r);
    let datagrams = all
        .iter()
        .flatten()
        .map(Pair::missing)
        .sum::<u64>()
        .min(window);
    let socket = all
        .iter()
        .flatten()
        .map(|p| p.recv.rxq_overflow)
        .sum::<u64>();
    let drops = if socket > 0 { socket } else { rcvbuf };
    let receive_buffer = datagrams.min((drops as f64 * per_drop).round() as u64);
    let send_buffer = (datagrams - receive_buffer).min(sndbuf);
    let path = (datagrams - receive_buffer - send_buffer).min(path_drops(v));
    Missing {
        datagrams,
        in_flight: window - datagrams,
        receive_buffer,
        send_buffer,
        path,
        unexplained: datagrams - receive_buffer - send_buffer - path,
        socket_rxq_overflow: socket,
        host_rcvbuf_errors: rcvbuf,
        host_in_errors: sum(&receivers, |c| c.in_errors),
        host_sndbuf_errors: sndbuf,
    }
}

/// Frames the lab's WAN emulator dropped during the test on the links the datagrams crossed: on
/// a link joining a flow's two ends, the direction from sender to receiver; both directions of
/// any other link (one between switches, or crossed both ways).
fn path_drops(v: &View<'_>) -> u64 {
    let name = |i: usize| v.run.ends[i].name.as_str();
    let flows: Vec<(&str, &str)> = v
        .located
        .iter()
        .flatten()
        .map(|l| (name(l.sender.0), name(l.receiver.0)))
        .collect();
    let dropped = |c: &Option<serde_json::Value>, dir: &str| -> u64 {
        c.as_ref().and_then(|c| c[dir].as_object()).map_or(0, |o| {
            o.iter()
                .filter(|(k, _)| k.starts_with("dropped_"))
                .filter_map(|(_, n)| n.as_u64())
                .sum()
        })
    };
    let mut total = 0;
    for link in &v.run.wan {
        let (a, b) = (link.ends[0].as_str(), link.ends[1].as_str());
        let dirs: &[&str] = match () {
            _ if flows.iter().all(|&f| f == (a, b)) => &["a_to_b"],
            _ if flows.iter().all(|&f| f == (b, a)) => &["b_to_a"],
            _ => &["a_to_b", "b_to_a"],
        };
        for dir in dirs {
            let before = dropped(&link.counters_before, dir);
            total += dropped(&link.counters_after, dir).saturating_sub(before);
        }
    }
    total
}

/// The UDP figures of one interval; `span(end)` is that end's pair of snapshots bounding it.
pub fn interval<'a>(
    v: &View<'_>,
    span: impl Fn(usize) -> Option<(&'a Snapshot, &'a Snapshot)>,
) -> UdpInterval {
    let (seq, stamped) = countable(&v.run.plan);
    let mut iv = UdpInterval::default();
    let (mut r, mut jitter, mut n) = (UdpCounters::default(), 0.0, 0usize);
    for l in v.located.iter().flatten() {
        let flow = |end: usize, pos: usize| {
            span(end).map(|(a, b)| {
                let get = |s: &Snapshot| s.flows.get(pos).and_then(|f| f.udp());
                (delta(get(a), get(b)), (b.t_ns - a.t_ns) as f64 / 1e9)
            })
        };
        if let Some((d, secs)) = flow(l.receiver.0, l.receiver.1) {
            iv.datagrams += d.datagrams;
            iv.datagrams_per_second += ratio(d.datagrams as f64, secs);
            add(&mut r, &d);
            jitter += d.jitter_ns as f64 / 1e3;
            n += 1;
        }
        if let Some((d, secs)) = flow(l.sender.0, l.sender.1) {
            iv.sender_datagrams_per_second += ratio(d.datagrams_sent as f64, secs);
        }
    }
    iv.lost = seq.then_some(r.lost);
    iv.duplicates = seq.then_some(r.duplicates);
    iv.reordered = seq.then_some(r.reordered);
    iv.jitter_us = stamped.then(|| ratio(jitter, n as f64));
    iv
}
