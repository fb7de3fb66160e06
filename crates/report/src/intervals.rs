//! Per-interval records: consecutive snapshots of each end, paired by position (every end cuts
//! intervals on the same schedule relative to the common start instant). An interval is labelled
//! with the edges of the grid the user asked for (`--interval` after `--omit`); the instants its
//! snapshots were really taken (a busy machine wakes a sampler late) are kept beside them, and
//! its rates are computed over those.

use crate::cpu::cpu_between;
use crate::floor::{rate, ratio, segs_per_ack, tcp_delta};
use crate::model::{FlowInterval, Interval, PER_FLOW_INTERVALS_MAX};
use crate::run::{RunData, View};
use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::sample::{FlowSnapshot, Mark, Snapshot};

/// The snapshots that bound intervals: up to the window's end (or all, if it never came), and
/// the position of the window's start among them.
fn bounds(snaps: &[Snapshot]) -> (Vec<&Snapshot>, usize) {
    let end = snaps
        .iter()
        .position(|s| s.mark == Mark::WindowEnd)
        .map_or(snaps.len(), |i| i + 1);
    let mut list: Vec<&Snapshot> = snaps[..end].iter().collect();
    // A counted test's window ends at its last transfer, which may precede grid snapshots taken
    // while the flows drained: those saw nothing more and would make the last interval run
    // backwards, so the window's end replaces them.
    if let Some(last) = list.last().filter(|s| s.mark == Mark::WindowEnd).copied() {
        list.pop();
        while list.len() > 1 && list.last().is_some_and(|s| s.t_ns >= last.t_ns) {
            list.pop();
        }
        list.push(last);
    }
    // Without a window start (the test died in its warm-up), every interval is warm-up.
    let ws = list
        .iter()
        .position(|s| s.mark == Mark::WindowStart)
        .unwrap_or(list.len());
    (list, ws)
}

/// The grid instant (ns after the start) of each snapshot in `list`, in order: the warm-up's and
/// the window's edges where the plan puts them, intervals every `--interval` from the last edge;
/// a counted test's window ends when it really did.
fn grid(plan: &TestPlan, list: &[&Snapshot]) -> Vec<i64> {
    let iv = plan.interval_ns.max(1_000_000) as i64;
    let omit = plan.omit_ns as i64;
    let mut prev = 0i64;
    list.iter()
        .map(|s| {
            let base = if prev < omit { 0 } else { omit };
            prev = match s.mark {
                Mark::Start => 0,
                Mark::WindowStart => omit,
                Mark::WindowEnd => match plan.limit {
                    Limit::Time { duration_ns } => omit.saturating_add(duration_ns as i64),
                    _ => s.t_ns.max(prev),
                },
                _ => ((prev - base) / iv + 1)
                    .saturating_mul(iv)
                    .saturating_add(base),
            };
            prev
        })
        .collect()
}

/// The snapshots bounding interval `k` (between positions k-1 and k) of one end.
fn span<'a>(list: &[&'a Snapshot], k: usize) -> Option<(&'a Snapshot, &'a Snapshot)> {
    list.get(k).map(|b| (list[k - 1], *b))
}

fn seconds(s: Option<(&Snapshot, &Snapshot)>) -> f64 {
    s.map_or(0.0, |(a, b)| (b.t_ns - a.t_ns) as f64 / 1e9)
}

/// What a flow missing from a snapshot counts as.
static NO_FLOW: FlowSnapshot = FlowSnapshot {
    sent: 0,
    received: 0,
    transactions: 0,
    lost: 0,
    tcp: None,
    kind: None,
};

fn pair<'a>(
    s: Option<(&'a Snapshot, &'a Snapshot)>,
    pos: usize,
) -> Option<(&'a FlowSnapshot, &'a FlowSnapshot)> {
    s.map(|(a, b)| {
        (
            a.flows.get(pos).unwrap_or(&NO_FLOW),
            b.flows.get(pos).unwrap_or(&NO_FLOW),
        )
    })
}

/// Each end's interval-bounding snapshots with its window's start position, the end whose
/// snapshots set the clock, and the grid edges of that end's snapshots.
struct Cuts<'a> {
    all: Vec<(Vec<&'a Snapshot>, usize)>,
    clock: usize,
    edges: Vec<i64>,
}

impl<'a> Cuts<'a> {
    fn new(run: &'a RunData) -> Self {
        let all: Vec<(Vec<&Snapshot>, usize)> = run.ends.iter().map(|e| bounds(&e.snaps)).collect();
        let clock = (0..all.len())
            .rev()
            .max_by_key(|&i| all[i].0.len())
            .unwrap_or(0);
        let edges = grid(&run.plan, &all[clock].0);
        Cuts { all, clock, edges }
    }

    /// How many intervals the snapshots so far bound.
    fn count(&self) -> usize {
        self.all[self.clock].0.len().saturating_sub(1)
    }

    /// How many intervals every end still running (`done[i]` false) has reached.
    fn reached(&self, done: &[bool]) -> usize {
        self.all
            .iter()
            .zip(done)
            .filter(|(_, d)| !**d)
            .map(|((list, _), _)| list.len().saturating_sub(1))
            .fold(self.count(), usize::min)
    }
}

/// The intervals of a run.
pub fn build(v: &View<'_>) -> Vec<Interval> {
    let cuts = Cuts::new(v.run);
    let client = v.run.ends.len().min(2) - 1;
    (1..=cuts.count())
        .map(|k| interval(v, &cuts, k, client))
        .collect()
}

/// Intervals `from` on of a run still going (seen through `v`), as far as every end still
/// running (`done[i]` false) has reached; with `per_host`, each with every client host's share
/// of it (named).
pub fn live(
    v: &View<'_>,
    done: &[bool],
    from: usize,
    per_host: bool,
) -> Vec<(Interval, Vec<(String, Interval)>)> {
    let run = v.run;
    let cuts = Cuts::new(run);
    let client = run.ends.len().min(2) - 1;
    (from + 1..=cuts.reached(done))
        .map(|k| {
            let hosts = (1..run.ends.len())
                .filter(|_| per_host)
                .map(|i| {
                    (
                        run.ends[i].name.clone(),
                        interval(&host_view(v, i), &cuts, k, i),
                    )
                })
                .collect();
            (interval(v, &cuts, k, client), hosts)
        })
        .collect()
}

/// The view of `v` restricted to the flows end `i` takes part in.
fn host_view<'a>(v: &View<'a>, i: usize) -> View<'a> {
    View {
        run: v.run,
        windows: v.windows.clone(),
        located: v
            .located
            .iter()
            .map(|l| l.filter(|l| l.sender.0 == i || l.receiver.0 == i))
            .collect(),
    }
}

/// Interval `k` of the flows `v` locates; `client` is the end whose CPU is the local one.
fn interval(v: &View<'_>, cuts: &Cuts<'_>, k: usize, client: usize) -> Interval {
    let run = v.run;
    let (all, edges) = (&cuts.all, &cuts.edges);
    let (clock_list, ws) = &all[cuts.clock];
    let mut iv = Interval {
        start: edges[k - 1] as f64 / 1e9,
        end: edges[k] as f64 / 1e9,
        measured_start: clock_list[k - 1].t_ns as f64 / 1e9,
        measured_end: clock_list[k].t_ns as f64 / 1e9,
        omitted: k <= *ws,
        ..Default::default()
    };
    add_flows(v, all, k, &mut iv);
    let cpu = |i: usize| {
        let hz = run.ends[i].info.host.clock_ticks.max(1) as f64;
        span(&all[i].0, k).map_or(0.0, |(a, b)| {
            cpu_between(&a.cpu, &b.cpu, hz, 0.0, run.embedded).total
        })
    };
    iv.cpu_local = cpu(client);
    iv.cpu_remote = cpu(0);
    iv.section = crate::sections::of_plan(&run.plan).interval(v, &|e| span(&all[e].0, k));
    iv
}

/// Adds the bytes and TCP figures of interval `k` of every flow `v` locates to `iv`.
fn add_flows(v: &View<'_>, all: &[(Vec<&Snapshot>, usize)], k: usize, iv: &mut Interval) {
    let run = v.run;
    let per_flow = run.plan.flows.len() <= PER_FLOW_INTERVALS_MAX;
    let (mut rtt_sum, mut rtt_n) = (0.0, 0u32);
    for (f, l) in run.plan.flows.iter().zip(&v.located) {
        let Some(l) = l else { continue };
        let (snd, rcv) = (span(&all[l.sender.0].0, k), span(&all[l.receiver.0].0, k));
        let (r, s) = (pair(rcv, l.receiver.1), pair(snd, l.sender.1));
        let bytes = r.map_or(0, |(a, b)| b.received.saturating_sub(a.received));
        let sent = s.map_or(0, |(a, b)| b.sent.saturating_sub(a.sent));
        let tcp = s.map(|(a, b)| tcp_delta(a.tcp, b.tcp)).unwrap_or_default();
        let rtcp = r.map(|(a, b)| tcp_delta(a.tcp, b.tcp)).unwrap_or_default();
        let pct = |us: u64| ratio(us as f64 * 1e-6, seconds(snd)) * 100.0;
        let fi = FlowInterval {
            id: f.id,
            bits_per_second: rate(bytes, seconds(rcv)),
            sender_bits_per_second: rate(sent, seconds(snd)),
            bytes,
            retransmits: tcp.retransmits as u64,
            rtt_us: tcp.rtt_us,
            rttvar_us: tcp.rttvar_us,
            cwnd: tcp.snd_cwnd,
            window: tcp.snd_wnd,
            delivery_rate_bps: tcp.delivery_rate as f64 * 8.0,
            segs_out: tcp.segs_out.into(),
            data_segs_out: tcp.data_segs_out.into(),
            data_segs_per_ack: segs_per_ack(run.plan.kind.id(), &rtcp),
            rwnd_limited_pct: pct(tcp.rwnd_limited_us),
            sndbuf_limited_pct: pct(tcp.sndbuf_limited_us),
            busy_pct: pct(tcp.busy_time_us),
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
}
