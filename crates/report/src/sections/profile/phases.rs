//! Iteration latency per transaction: the connecting ends' interval histograms, each given to
//! the one transaction whose flow operations moved in that interval (an interval in which two
//! transactions moved, as at a barrier, is left out). Latency under load compares a probe's
//! transaction before a barrier (idle) with the one after it (loaded).

use super::model::TransactionLatency;
use super::responsiveness::trimmed_mean;
use crate::run::{Role, View};
use crate::sections::rr::figures::{empty, latency, merge_into};
use fathom_proto::profile::Program;
use fathom_proto::profile::{ProfileCounters, PROFILE_OPS};
use fathom_proto::sample::Snapshot;
use hdrhistogram::Histogram;

/// Each transaction's iteration latency, in program order (none without any timed iteration).
pub fn transactions(v: &View<'_>, program: &Program) -> Vec<TransactionLatency> {
    let tx_of: Vec<usize> = program
        .transactions
        .iter()
        .enumerate()
        .flat_map(|(t, tx)| tx.ops.iter().map(move |_| t))
        .take(PROFILE_OPS)
        .collect();
    let mut hists: Vec<Histogram<u64>> = program.transactions.iter().map(|_| empty()).collect();
    for e in v.run.ends.iter().filter(|e| e.role == Role::Client) {
        for pair in e.snaps.windows(2) {
            if let Some(t) = moved(&pair[0], &pair[1], &tx_of) {
                merge_into(&mut hists[t], std::slice::from_ref(&pair[1]));
            }
        }
    }
    if hists.iter().all(Histogram::is_empty) {
        return Vec::new();
    }
    hists
        .iter()
        .enumerate()
        .map(|(t, h)| TransactionLatency {
            transaction: t + 1,
            samples: h.len(),
            latency_us: latency(h),
            trimmed_mean_us: trimmed_mean(h).map(|ns| ns / 1e3),
        })
        .collect()
}

/// The one transaction whose operations moved between `a` and `b`, if exactly one did.
fn moved(a: &Snapshot, b: &Snapshot, tx_of: &[usize]) -> Option<usize> {
    let mut found = None;
    for (fa, fb) in a.flows.iter().zip(&b.flows) {
        let (Some(pa), Some(pb)) = (
            fa.counters::<ProfileCounters>(),
            fb.counters::<ProfileCounters>(),
        ) else {
            continue;
        };
        for ((oa, ob), &t) in pa.ops.iter().zip(&pb.ops).zip(tx_of) {
            if ob.count > oa.count {
                match found {
                    Some(f) if f != t => return None,
                    _ => found = Some(t),
                }
            }
        }
    }
    found
}
