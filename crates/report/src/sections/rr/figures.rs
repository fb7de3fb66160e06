//! Request/response figures: transactions, latency percentiles from the merged HDR histograms,
//! CPU and TCP segments per transaction.

use crate::cpu::busy_us;
use crate::floor::{ratio, tcp_delta};
use crate::model::{
    FlowResult, KindFlow, KindSummary, Latency, RrFlow, RrInterval, RrSummary, RrTest,
    SegmentsPerTransaction, ServiceDemand, Summary,
};
use crate::run::View;
use crate::section::Span;
use fathom_proto::kind::Figure;
use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::sample::{FlowSnapshot, Snapshot, TcpInfo};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// Adds the latencies carried by `snaps` to `into`.
pub fn merge_into(into: &mut Histogram<u64>, snaps: &[Snapshot]) {
    for bytes in snaps.iter().filter_map(|s| s.latency.as_deref()) {
        if let Ok(h) = Deserializer::new().deserialize::<u64, _>(&mut &bytes[..]) {
            let _ = into.add(&h);
        }
    }
}

/// Every round trip the run's ends recorded, as (seconds, count) pairs from their merged HDR
/// histograms, smallest first (a mesh hands them to its metrics).
pub fn round_trips(run: &crate::RunData) -> Vec<(f64, u64)> {
    let mut h = empty();
    for e in &run.ends {
        merge_into(&mut h, &e.snaps);
    }
    h.iter_recorded()
        .map(|v| (v.value_iterated_to() as f64 / 1e9, v.count_at_value()))
        .collect()
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

/// Fills the request/response sections of the summary and the flows; the figures a kind adds
/// are those its descriptor lists.
pub fn fill(v: &View<'_>, summary: &mut Summary, flows: &mut [FlowResult]) {
    let run = v.run;
    let Some(rr) = run.plan.rr() else { return };
    let (mut tx, mut answered, mut lost) = (0u64, 0u64, 0u64);
    let mut tcp = TcpInfo::default();
    let mut per_asker: Vec<(usize, u64)> = Vec::new();
    for (flow, l) in flows.iter_mut().zip(&v.located) {
        let Some(l) = l else { continue };
        let (Some(aw), Some(nw)) = (v.window(l.sender.0), v.window(l.receiver.0)) else {
            continue;
        };
        let delta = |w: &crate::run::Window<'_>, pos: usize, pick: fn(&FlowSnapshot) -> u64| {
            let (a, b) = w.flow(pos);
            pick(&b).saturating_sub(pick(&a))
        };
        let t = delta(&aw, l.sender.1, |f| f.transactions);
        lost += delta(&aw, l.sender.1, |f| f.lost);
        answered += delta(&nw, l.receiver.1, |f| f.transactions);
        let (a, b) = aw.flow(l.sender.1);
        let seg = tcp_delta(a.tcp, b.tcp);
        tcp.segs_out += seg.segs_out;
        tcp.segs_in += seg.segs_in;
        tx += t;
        match per_asker.iter_mut().find(|(e, _)| *e == l.sender.0) {
            Some((_, n)) => *n += t,
            None => per_asker.push((l.sender.0, t)),
        }
        flow.section = Some(KindFlow::Rr(RrFlow {
            transactions: t,
            transactions_per_second: ratio(t as f64, aw.seconds()),
        }));
    }
    let mut hist = empty();
    let mut tps = 0.0;
    for &(e, n) in &per_asker {
        if let Some(w) = v.window(e) {
            merge_into(
                &mut hist,
                &run.ends[e].snaps[w.span.0 + 1..=w.span.1.max(w.span.0)],
            );
            tps += ratio(n as f64, w.seconds());
        }
    }
    let client = run.ends.len().min(2) - 1;
    let per_tx = |i: usize| {
        v.window(i)
            .map_or(0.0, |w| ratio(busy_us(&run.ends[i], &w), tx as f64))
    };
    let kind = run.plan.kind.descriptor();
    let latency_us = latency(&hist);
    summary.section = Some(KindSummary::Rr(RrSummary {
        transactions: tx,
        transactions_per_second: tps,
        connections_per_second: kind.adds(Figure::ConnectionsPerSecond).then_some(tps),
        answered,
        lost: kind.adds(Figure::Lost).then_some(lost),
        one_way_estimate_us: latency_us.as_ref().map(|l| l.p50 / 2.0),
        latency_us,
        cpu_us_per_transaction: ServiceDemand {
            local: per_tx(client),
            remote: per_tx(0),
        },
        segments_per_transaction: (kind.adds(Figure::SegmentsPerTransaction) && rr.request > 0)
            .then(|| SegmentsPerTransaction {
                request: ratio(tcp.segs_out as f64, tx as f64),
                response: ratio(tcp.segs_in as f64, tx as f64),
            }),
    }));
}

/// The request/response options as run, for the kinds that have them.
pub fn echo(p: &TestPlan) -> Option<RrTest> {
    let r = p.rr().filter(|_| p.kind.descriptor().is_rr())?;
    Some(RrTest {
        request_size: r.request,
        response_size: r.response,
        burst: r.rate.is_none().then_some(r.burst),
        rate: r.rate,
        transactions: match p.limit {
            Limit::Transactions(n) => Some(n),
            _ => None,
        },
        udp_timeout_ms: p
            .kind
            .descriptor()
            .adds(Figure::Lost)
            .then(|| r.udp_timeout_ns as f64 / 1e6),
    })
}

/// Transactions, latency and losses of one interval, from the asking ends' `span`s.
pub fn interval(v: &View<'_>, span: &Span<'_>) -> RrInterval {
    let mut hist = empty();
    let (mut tps, mut lost) = (0.0, 0u64);
    let mut askers: Vec<usize> = v.located.iter().flatten().map(|l| l.sender.0).collect();
    askers.sort_unstable();
    askers.dedup();
    for e in askers {
        let Some((a, b)) = span(e) else {
            continue;
        };
        let positions: Vec<usize> = v
            .located
            .iter()
            .flatten()
            .filter(|l| l.sender.0 == e)
            .map(|l| l.sender.1)
            .collect();
        let sum = |s: &Snapshot, pick: fn(&FlowSnapshot) -> u64| -> u64 {
            positions
                .iter()
                .filter_map(|&p| s.flows.get(p))
                .map(pick)
                .sum()
        };
        let secs = (b.t_ns - a.t_ns) as f64 / 1e9;
        tps += ratio(
            sum(b, |f| f.transactions).saturating_sub(sum(a, |f| f.transactions)) as f64,
            secs,
        );
        lost += sum(b, |f| f.lost).saturating_sub(sum(a, |f| f.lost));
        merge_into(&mut hist, std::slice::from_ref(b));
    }
    let l = latency(&hist);
    RrInterval {
        transactions_per_second: tps,
        latency_p50_us: l.as_ref().map(|l| l.p50),
        latency_p99_us: l.as_ref().map(|l| l.p99),
        lost: v
            .run
            .plan
            .kind
            .descriptor()
            .adds(Figure::Lost)
            .then_some(lost),
    }
}
