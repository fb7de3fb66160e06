//! How a profile flow's counts per flow operation are published: four words per operation
//! (count, bytes, time, failures), for the first [`PROFILE_OPS`].

use crate::measure::{load_words, store_words, Publish};
use fathom_proto::kind::FlowKindCounters;
use fathom_proto::profile::{OpCounters, ProfileCounters, PROFILE_OPS};
use std::sync::atomic::AtomicU64;

/// Words per flow operation.
const PER_OP: usize = 4;

impl Publish for ProfileCounters {
    const WORDS: usize = PER_OP * PROFILE_OPS;

    fn store(&self, cells: &[AtomicU64]) {
        for (cell, o) in cells.chunks_exact(PER_OP).zip(&self.ops) {
            store_words(cell, [o.count, o.bytes, o.ns, o.failed]);
        }
    }

    fn load(cells: &[AtomicU64]) -> FlowKindCounters {
        let mut p = ProfileCounters::default();
        for (o, cell) in p.ops.iter_mut().zip(cells.chunks_exact(PER_OP)) {
            let [count, bytes, ns, failed] = load_words(cell);
            *o = OpCounters {
                count,
                bytes,
                ns,
                failed,
            };
        }
        FlowKindCounters::Profile(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::counters::FlowStats;

    #[test]
    fn a_flows_counts_come_back_as_published() {
        let stats = FlowStats::default();
        assert_eq!(stats.snapshot().kind, None);
        let mut p = ProfileCounters::default();
        p.ops[0] = OpCounters {
            count: 3,
            bytes: 4096,
            ns: 7,
            failed: 1,
        };
        p.ops[PROFILE_OPS - 1].count = 9;
        stats.publish(&p);
        assert_eq!(
            stats.snapshot().kind.as_deref(),
            Some(&FlowKindCounters::Profile(p))
        );
    }
}
