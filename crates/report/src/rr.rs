//! Request/response figures: transactions, latency percentiles from the merged HDR histograms,
//! CPU and TCP segments per transaction.

use crate::build::{ratio, tcp_delta, EndData, RunData, Window};
use crate::cpu::busy_ticks;
use crate::model::{FlowResult, Latency, SegmentsPerTransaction, ServiceDemand, Summary};
use fathom_proto::plan::{Direction, KindId};
use fathom_proto::sample::{Snapshot, TcpInfo};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// The snapshots after a window's start up to and including its end: each holds the latencies
/// recorded since the one before it.
fn inside<'a>(snaps: &'a [Snapshot], w: &Window<'_>) -> &'a [Snapshot] {
    let pos = |s: &Snapshot| snaps.iter().position(|x| std::ptr::eq(x, s));
    match (pos(w.start), pos(w.end)) {
        (Some(a), Some(b)) if b > a => &snaps[a + 1..=b],
        _ => &[],
    }
}

/// Adds the latencies carried by `snaps` to `into`.
pub fn merge_into(into: &mut Histogram<u64>, snaps: &[Snapshot]) {
    for bytes in snaps.iter().filter_map(|s| s.latency.as_deref()) {
        if let Ok(h) = Deserializer::new().deserialize::<u64, _>(&mut &bytes[..]) {
            let _ = into.add(&h);
        }
    }
}

/// An empty histogram that grows as needed.
pub fn empty() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant figures are valid");
    h.auto(true);
    h
}

/// Percentiles of a histogram of ns, in µs; `None` if it holds nothing.
pub fn latency(h: &Histogram<u64>) -> Option<Latency> {
    (!h.is_empty()).then(|| {
        let us = |ns: u64| ns as f64 / 1e3;
        Latency {
            min: us(h.min()),
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
            mean: h.mean() / 1e3,
            stddev: h.stdev() / 1e3,
        }
    })
}

/// Fills the request/response parts of the summary and the flows.
pub fn fill(run: &RunData, lw: Window<'_>, rw: Window<'_>, summary: &mut Summary, flows: &mut [FlowResult]) {
    let Some(rr) = &run.plan.rr else { return };
    let asker = |d: Direction| match d {
        Direction::Forward => (&run.local, lw, &run.remote, rw),
        Direction::Reverse => (&run.remote, rw, &run.local, lw),
    };
    let (mut tx, mut answered, mut lost, mut tps) = (0u64, 0u64, 0u64, 0.0);
    let mut tcp = TcpInfo::default();
    let mut hist = empty();
    for d in [Direction::Forward, Direction::Reverse] {
        if run.plan.flows_in(d).next().is_none() {
            continue;
        }
        let (ask, aw, _, nw) = asker(d);
        let mut dir_tx = 0;
        for (i, f) in run.plan.flows.iter().enumerate().filter(|(_, f)| f.dir == d) {
            let delta = |w: &Window<'_>, pick: fn(&fathom_proto::sample::FlowSnapshot) -> u64| {
                let get = |s: &Snapshot| s.flows.get(i).map_or(0, pick);
                get(w.end).saturating_sub(get(w.start))
            };
            let t = delta(&aw, |f| f.transactions);
            lost += delta(&aw, |f| f.lost);
            answered += delta(&nw, |f| f.transactions);
            let g = |s: &Snapshot| s.flows.get(i).and_then(|f| f.tcp);
            let seg = tcp_delta(g(aw.start), g(aw.end));
            tcp.segs_out += seg.segs_out;
            tcp.segs_in += seg.segs_in;
            dir_tx += t;
            if let Some(flow) = flows.iter_mut().find(|x| x.id == f.id) {
                flow.transactions = Some(t);
                flow.transactions_per_second = Some(ratio(t as f64, aw.seconds()));
            }
        }
        merge_into(&mut hist, inside(&ask.snaps, &aw));
        tx += dir_tx;
        tps += ratio(dir_tx as f64, aw.seconds());
    }
    let per_tx = |e: &EndData, w: Window<'_>| {
        let hz = e.info.host.clock_ticks.max(1) as f64;
        ratio(busy_ticks(&w.start.cpu, &w.end.cpu) as f64 / hz * 1e6, tx as f64)
    };
    summary.transactions = Some(tx);
    summary.transactions_per_second = Some(tps);
    summary.answered = Some(answered);
    summary.connections_per_second = (run.plan.kind == KindId::Crr).then_some(tps);
    summary.lost = (run.plan.kind == KindId::UdpRr).then_some(lost);
    summary.latency_us = latency(&hist);
    summary.one_way_estimate_us = summary.latency_us.as_ref().map(|l| l.p50 / 2.0);
    summary.cpu_us_per_transaction = Some(ServiceDemand { local: per_tx(&run.local, lw), remote: per_tx(&run.remote, rw) });
    summary.segments_per_transaction = (run.plan.kind == KindId::Rr && rr.request > 0).then(|| SegmentsPerTransaction {
        request: ratio(tcp.segs_out as f64, tx as f64),
        response: ratio(tcp.segs_in as f64, tx as f64),
    });
}
