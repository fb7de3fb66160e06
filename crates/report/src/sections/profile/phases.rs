//! Iteration latency per transaction: the connecting ends' interval histograms, each given to
//! the one transaction whose flow operations moved in that interval (an interval in which two
//! transactions moved, as at a barrier, is left out). Latency under load compares a probe's
//! transaction before a barrier (idle) with the one after it (loaded).

use super::model::TransactionLatency;
use crate::run::{Role, View};
use crate::sections::rr::figures::{empty, latency, merge_into};
use fathom_proto::profile::Program;
use fathom_proto::sample::{Snapshot, PROFILE_OPS};
use hdrhistogram::Histogram;

/// Share of the samples a trimmed mean keeps (the lowest 95%, as the IPPM responsiveness
/// draft's trimmed mean drops the highest 5%).
const TRIM_KEEP: f64 = 0.95;

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
        let (Some(pa), Some(pb)) = (fa.profile(), fb.profile()) else {
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

/// The mean of the lowest [`TRIM_KEEP`] of `h`'s samples, ns.
fn trimmed_mean(h: &Histogram<u64>) -> Option<f64> {
    let keep = ((h.len() as f64) * TRIM_KEEP).ceil() as u64;
    let (mut n, mut sum) = (0u64, 0f64);
    for v in h.iter_recorded() {
        let take = v.count_at_value().min(keep.saturating_sub(n));
        if take == 0 {
            break;
        }
        n += take;
        sum += take as f64 * h.median_equivalent(v.value_iterated_to()) as f64;
    }
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trimmed_mean_drops_the_slowest_five_percent() {
        let mut h = empty();
        for _ in 0..95 {
            h.record(1_000).unwrap();
        }
        for _ in 0..5 {
            h.record(1_000_000).unwrap();
        }
        let m = trimmed_mean(&h).unwrap();
        assert!((m - 1_000.0).abs() < 1.0, "{m}");
        assert_eq!(trimmed_mean(&empty()), None);
    }
}
