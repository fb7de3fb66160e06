//! How a UDP stream flow's counters are published: one word per counter, in the order of
//! [`UdpCounters`]' fields (the transit sum's bits as they are).

use crate::measure::{load_words, store_words, Publish};
use fathom_proto::kind::FlowKindCounters;
use fathom_proto::udp::UdpCounters;
use std::sync::atomic::AtomicU64;

impl Publish for UdpCounters {
    const WORDS: usize = 12;

    fn store(&self, cells: &[AtomicU64]) {
        store_words(
            cells,
            [
                self.datagrams_sent,
                self.datagrams,
                self.lost,
                self.duplicates,
                self.reordered,
                self.reorder_max,
                self.jitter_ns,
                self.calls,
                self.rxq_overflow,
                self.messages,
                self.transit_sum_ns as u64,
                self.transits,
            ],
        );
    }

    fn load(cells: &[AtomicU64]) -> FlowKindCounters {
        let w: [u64; Self::WORDS] = load_words(cells);
        FlowKindCounters::Udp(UdpCounters {
            datagrams_sent: w[0],
            datagrams: w[1],
            lost: w[2],
            duplicates: w[3],
            reordered: w[4],
            reorder_max: w[5],
            jitter_ns: w[6],
            calls: w[7],
            rxq_overflow: w[8],
            messages: w[9],
            transit_sum_ns: w[10] as i64,
            transits: w[11],
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
        let mut u = UdpCounters {
            datagrams_sent: 1,
            datagrams: 2,
            lost: 3,
            duplicates: 4,
            reordered: 5,
            reorder_max: 6,
            jitter_ns: 7,
            calls: 8,
            rxq_overflow: 9,
            messages: 10,
            transit_sum_ns: -11,
            transits: 12,
        };
        stats.publish(&u);
        assert_eq!(
            stats.snapshot().kind.as_deref(),
            Some(&FlowKindCounters::Udp(u))
        );
        u.transit_sum_ns = i64::MIN;
        stats.publish(&u);
        assert_eq!(stats.snapshot().udp(), Some(u));
    }
}
