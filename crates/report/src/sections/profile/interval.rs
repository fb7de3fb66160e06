//! A profile group's figures of one interval (`intervals[].profile`): its iterations and
//! their time at the connecting ends, what those ends read (a group that reads, as the
//! download half of a latency-under-load profile does, moves its data towards them, which the
//! interval's receiver figures, the agent's, do not show), and each flow operation's counts
//! and times at both ends.

use super::figures::add_op_times;
use super::model::{OpInterval, OpSpan, ProfileInterval};
use crate::floor::ratio;
use crate::run::{Role, View};
use crate::section::Span;
use crate::sections::rr::figures::{empty, merge_into};
use fathom_proto::plan::KindPlan;
use fathom_proto::profile::{OpCounters, ProfileCounters, PROFILE_OPS};
use fathom_proto::sample::{Mark, Snapshot};
use hdrhistogram::Histogram;

/// The interval's figures, from the connecting ends' `span`s.
pub fn interval(v: &View<'_>, span: &Span<'_>) -> ProfileInterval {
    let mut hist = empty();
    let (mut ips, mut read_bps) = (0.0, 0.0);
    let clients = v.run.ends.iter().enumerate();
    for (i, _) in clients.filter(|(_, e)| e.role == Role::Client) {
        let Some((a, b)) = span(i) else { continue };
        let secs = (b.t_ns.saturating_sub(a.t_ns)) as f64 / 1e9;
        let sum = |s: &fathom_proto::sample::Snapshot, pick: fn(&_) -> u64| -> u64 {
            s.flows.iter().map(pick).sum()
        };
        let iterations = sum(b, |f| f.transactions).saturating_sub(sum(a, |f| f.transactions));
        let read = sum(b, |f| f.received).saturating_sub(sum(a, |f| f.received));
        ips += ratio(iterations as f64, secs);
        read_bps += ratio(read as f64 * 8.0, secs);
        merge_into(&mut hist, std::slice::from_ref(b));
    }
    let at = |q: f64| (!hist.is_empty()).then(|| hist.value_at_quantile(q) as f64 / 1e3);
    ProfileInterval {
        iterations_per_second: ips,
        latency_p50_us: at(0.5),
        latency_p90_us: at(0.9),
        client_received_bits_per_second: read_bps,
        ops: ops(v, span),
    }
}

/// Each flow operation's figures of the interval at both ends, for the program's operations.
fn ops(v: &View<'_>, span: &Span<'_>) -> Vec<OpInterval> {
    let KindPlan::Profile(program) = &v.run.plan.kind else {
        return Vec::new();
    };
    let n = program
        .transactions
        .iter()
        .map(|t| t.ops.len())
        .sum::<usize>()
        .min(PROFILE_OPS);
    let client = end(v, span, Role::Client);
    let server = end(v, span, Role::Server);
    client
        .into_iter()
        .zip(server)
        .take(n)
        .map(|(client, server)| OpInterval { client, server })
        .collect()
}

/// Each flow operation's figures of the interval at every end in `role`.
fn end(v: &View<'_>, span: &Span<'_>, role: Role) -> Vec<OpSpan> {
    let mut counts = [OpCounters::default(); PROFILE_OPS];
    let mut hists: Vec<Histogram<u64>> = (0..PROFILE_OPS).map(|_| empty()).collect();
    let ends = v.run.ends.iter().enumerate();
    for (i, _) in ends.filter(|(_, e)| e.role == role) {
        let Some((a, b)) = span(i) else { continue };
        let (before, after) = (totals(a), totals(b));
        for ((c, x), y) in counts.iter_mut().zip(before).zip(after) {
            c.count += y.count.saturating_sub(x.count);
            c.bytes += y.bytes.saturating_sub(x.bytes);
            c.failed += y.failed.saturating_sub(x.failed);
        }
        for s in between(&v.run.ends[i].snaps, a, b) {
            add_op_times(&mut hists, s);
        }
    }
    counts
        .iter()
        .zip(&hists)
        .map(|(c, h)| {
            let at = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1e3);
            OpSpan {
                count: c.count,
                bytes: c.bytes,
                failed: c.failed,
                latency_p50_us: at(0.5),
                latency_p99_us: at(0.99),
            }
        })
        .collect()
}

/// The snapshots of `snaps` whose times (each since the snapshot before it) fall in the
/// interval from `a` to `b`: taken after `a` and by `b`, or, when `b` ends the window, any
/// time after `a` (those taken while the flows drained are not interval bounds).
fn between<'s>(
    snaps: &'s [Snapshot],
    a: &'s Snapshot,
    b: &'s Snapshot,
) -> impl Iterator<Item = &'s Snapshot> {
    let last = b.mark == Mark::WindowEnd;
    snaps
        .iter()
        .filter(move |s| s.t_ns > a.t_ns && (last || s.t_ns <= b.t_ns))
}

/// Each flow operation's counts in snapshot `s`, summed over its flows.
fn totals(s: &Snapshot) -> [OpCounters; PROFILE_OPS] {
    let mut ops = [OpCounters::default(); PROFILE_OPS];
    for p in s
        .flows
        .iter()
        .filter_map(|f| f.counters::<ProfileCounters>())
    {
        for (o, f) in ops.iter_mut().zip(p.ops) {
            o.count += f.count;
            o.bytes += f.bytes;
            o.failed += f.failed;
        }
    }
    ops
}
