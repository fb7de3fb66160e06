//! Per-interval records: consecutive snapshots of each end, paired by position (both ends cut
//! intervals on the same schedule relative to the common start instant).

use crate::build::{rate, tcp_delta, RunData};
use crate::cpu::cpu_between;
use crate::model::{FlowInterval, Interval, PER_FLOW_INTERVALS_MAX};
use fathom_proto::plan::Direction;
use fathom_proto::sample::{Mark, Snapshot};

/// The snapshots that bound intervals: up to the window's end (or all, if it never came).
fn bounds(snaps: &[Snapshot]) -> (Vec<&Snapshot>, usize) {
    let end = snaps.iter().position(|s| s.mark == Mark::WindowEnd).map_or(snaps.len(), |i| i + 1);
    let list: Vec<&Snapshot> = snaps[..end].iter().collect();
    // Without a window start (the test died in its warm-up), every interval is warm-up.
    let ws = list.iter().position(|s| s.mark == Mark::WindowStart).unwrap_or(list.len());
    (list, ws)
}

/// The snapshots bounding interval `k` (between positions k-1 and k) of one end.
fn span<'a>(list: &[&'a Snapshot], k: usize) -> Option<(&'a Snapshot, &'a Snapshot)> {
    list.get(k).map(|b| (list[k - 1], *b))
}

/// The intervals of a run.
pub fn build(run: &RunData) -> Vec<Interval> {
    let (local, lws) = bounds(&run.local.snaps);
    let (remote, rws) = bounds(&run.remote.snaps);
    let (clock, ws) = if local.len() > remote.len() { (&local, lws) } else { (&remote, rws) };
    let per_flow = run.plan.flows.len() <= PER_FLOW_INTERVALS_MAX;
    let hz = |e: &crate::build::EndData| e.info.host.clock_ticks.max(1) as f64;
    (1..clock.len())
        .map(|k| {
            let (ls, rs) = (span(&local, k), span(&remote, k));
            let mut iv = Interval {
                start: clock[k - 1].t_ns as f64 / 1e9,
                end: clock[k].t_ns as f64 / 1e9,
                omitted: k <= ws,
                ..Default::default()
            };
            let (mut rtt_sum, mut rtt_n) = (0.0, 0u32);
            for (i, f) in run.plan.flows.iter().enumerate() {
                let (snd, rcv) = match f.dir {
                    Direction::Forward => (ls, rs),
                    Direction::Reverse => (rs, ls),
                };
                let secs = |s: Option<(&Snapshot, &Snapshot)>| s.map_or(0.0, |(a, b)| (b.t_ns - a.t_ns) as f64 / 1e9);
                let get = |s: Option<(&Snapshot, &Snapshot)>| {
                    s.map(|(a, b)| (a.flows.get(i).copied().unwrap_or_default(), b.flows.get(i).copied().unwrap_or_default()))
                };
                let (r, s) = (get(rcv), get(snd));
                let bytes = r.map_or(0, |(a, b)| b.received.saturating_sub(a.received));
                let sent = s.map_or(0, |(a, b)| b.sent.saturating_sub(a.sent));
                let tcp = s.map(|(a, b)| tcp_delta(a.tcp, b.tcp)).unwrap_or_default();
                let fi = FlowInterval {
                    id: f.id,
                    bits_per_second: rate(bytes, secs(rcv)),
                    sender_bits_per_second: rate(sent, secs(snd)),
                    bytes,
                    retransmits: tcp.retransmits as u64,
                    rtt_us: tcp.rtt_us,
                    cwnd: tcp.snd_cwnd,
                };
                iv.bytes += bytes;
                iv.bits_per_second += fi.bits_per_second;
                iv.sender_bits_per_second += fi.sender_bits_per_second;
                iv.retransmits += fi.retransmits;
                iv.cwnd += fi.cwnd as u64;
                if fi.rtt_us > 0 {
                    rtt_sum += fi.rtt_us as f64;
                    rtt_n += 1;
                }
                if per_flow {
                    iv.flows.push(fi);
                }
            }
            iv.rtt_us = rtt_sum / f64::from(rtt_n.max(1));
            let cpu = |s: Option<(&Snapshot, &Snapshot)>, hz: f64| {
                s.map_or(0.0, |(a, b)| cpu_between(&a.cpu, &b.cpu, hz, 0.0, run.embedded).total)
            };
            iv.cpu_local = cpu(ls, hz(&run.local));
            iv.cpu_remote = cpu(rs, hz(&run.remote));
            if run.plan.rr.is_some() {
                rr_interval(run, &mut iv, ls, rs);
            }
            iv
        })
        .collect()
}

/// Transactions, latency and losses of one interval, from the asking end(s).
fn rr_interval(run: &RunData, iv: &mut Interval, ls: Option<(&Snapshot, &Snapshot)>, rs: Option<(&Snapshot, &Snapshot)>) {
    let mut hist = crate::rr::empty();
    let (mut tps, mut lost) = (0.0, 0u64);
    for (dir, span) in [(Direction::Forward, ls), (Direction::Reverse, rs)] {
        let Some((a, b)) = span else { continue };
        let ids: Vec<usize> = run.plan.flows.iter().enumerate().filter(|(_, f)| f.dir == dir).map(|(i, _)| i).collect();
        if ids.is_empty() {
            continue;
        }
        let sum = |s: &Snapshot, pick: fn(&fathom_proto::sample::FlowSnapshot) -> u64| -> u64 {
            ids.iter().filter_map(|&i| s.flows.get(i)).map(pick).sum()
        };
        let secs = (b.t_ns - a.t_ns) as f64 / 1e9;
        tps += crate::build::ratio(sum(b, |f| f.transactions).saturating_sub(sum(a, |f| f.transactions)) as f64, secs);
        lost += sum(b, |f| f.lost).saturating_sub(sum(a, |f| f.lost));
        crate::rr::merge_into(&mut hist, std::slice::from_ref(b));
    }
    let l = crate::rr::latency(&hist);
    iv.transactions_per_second = Some(tps);
    iv.latency_p50_us = l.as_ref().map(|l| l.p50);
    iv.latency_p99_us = l.as_ref().map(|l| l.p99);
    iv.lost = (run.plan.kind == fathom_proto::plan::KindId::UdpRr).then_some(lost);
}
