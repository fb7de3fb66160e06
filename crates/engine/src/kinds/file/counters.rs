//! How a file flow's counters are published: one word per counter, in the order of
//! [`FileCounters`]' fields; `u64::MAX` marks an absent `cached_bytes`, and `verified` is 0
//! (not yet), 1 (match) or 2 (mismatch).

use crate::measure::{load_words, store_words, Publish};
use fathom_proto::file::FileCounters;
use fathom_proto::kind::FlowKindCounters;
use std::sync::atomic::AtomicU64;

/// The word of an absent `cached_bytes`.
const ABSENT: u64 = u64::MAX;

impl Publish for FileCounters {
    const WORDS: usize = 6;

    fn store(&self, cells: &[AtomicU64]) {
        store_words(
            cells,
            [
                self.disk_bytes,
                self.disk_ns,
                self.net_ns,
                self.sync_ns,
                self.cached_bytes.unwrap_or(ABSENT),
                self.verified.map_or(0, |ok| if ok { 1 } else { 2 }),
            ],
        );
    }

    fn load(cells: &[AtomicU64]) -> FlowKindCounters {
        let w: [u64; Self::WORDS] = load_words(cells);
        FlowKindCounters::File(FileCounters {
            disk_bytes: w[0],
            disk_ns: w[1],
            net_ns: w[2],
            sync_ns: w[3],
            cached_bytes: Some(w[4]).filter(|&c| c != ABSENT),
            verified: (w[5] != 0).then_some(w[5] == 1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::counters::FlowStats;

    #[test]
    fn a_flows_counters_come_back_as_published() {
        let stats = FlowStats::default();
        let mut f = FileCounters {
            disk_bytes: 5,
            disk_ns: 6,
            net_ns: 7,
            sync_ns: 8,
            cached_bytes: None,
            verified: None,
        };
        for (cached, verified) in [(None, None), (Some(0), Some(false)), (Some(9), Some(true))] {
            (f.cached_bytes, f.verified) = (cached, verified);
            stats.publish(&f);
            assert_eq!(
                stats.snapshot().kind.as_deref(),
                Some(&FlowKindCounters::File(f))
            );
        }
    }
}
