//! The receiver's accounting of one flow's datagrams: sequence gaps (loss), duplicates,
//! late arrivals with their reorder distance, and RFC 3550 interarrival jitter.

use fathom_proto::udp::UdpCounters;

/// Sequence numbers remembered behind the highest seen, to tell a late datagram from a
/// duplicate (a bit each: 8 KB per flow).
const WINDOW: u64 = 1 << 16;
/// A sequence number this far ahead of the highest seen is not this flow's (a stray hello).
const FOREIGN: u64 = 1 << 40;

/// One flow's receive accounting.
pub struct Sequence {
    /// One past the highest sequence number seen.
    next: u64,
    /// Bit `s % WINDOW` set when `s` (within the window behind `next`) has arrived.
    seen: Vec<u64>,
    /// The last datagram's transit time (receive stamp minus send stamp), ns.
    last_transit: Option<i64>,
    /// Jitter estimate, ns (RFC 3550 section 6.4.1).
    jitter: f64,
    /// The counters as published.
    pub counters: UdpCounters,
}

impl Default for Sequence {
    fn default() -> Self {
        Sequence {
            next: 0,
            seen: vec![0; (WINDOW / 64) as usize],
            last_transit: None,
            jitter: 0.0,
            counters: UdpCounters::default(),
        }
    }
}

impl Sequence {
    fn bit(&mut self, s: u64) -> (&mut u64, u64) {
        let i = s % WINDOW;
        (&mut self.seen[(i / 64) as usize], 1 << (i % 64))
    }

    /// Accounts a datagram with sequence number `seq`.
    pub fn arrive(&mut self, seq: u64) {
        let c = &mut self.counters;
        if seq >= self.next {
            if seq - self.next >= FOREIGN {
                return;
            }
            c.lost += seq - self.next;
            if seq - self.next >= WINDOW {
                self.seen.fill(0);
            } else {
                for s in self.next..seq {
                    let (w, b) = self.bit(s);
                    *w &= !b;
                }
            }
            let (w, b) = self.bit(seq);
            *w |= b;
            self.next = seq + 1;
            return;
        }
        let distance = self.next - 1 - seq;
        if distance < WINDOW {
            let (w, b) = self.bit(seq);
            if *w & b != 0 {
                self.counters.duplicates += 1;
                return;
            }
            *w |= b;
        }
        let c = &mut self.counters;
        c.lost = c.lost.saturating_sub(1);
        c.reordered += 1;
        c.reorder_max = c.reorder_max.max(distance);
    }

    /// Folds in a datagram sent at `sent_ns` and received at `at_ns` (each on its host's
    /// monotonic clock: the jitter needs only differences between transits; the one-way delay
    /// needs the hosts' clock offset besides).
    pub fn transit(&mut self, sent_ns: u64, at_ns: u64) {
        let transit = at_ns as i64 - sent_ns as i64;
        let c = &mut self.counters;
        c.transit_sum_ns = c.transit_sum_ns.wrapping_add(transit);
        c.transits += 1;
        if let Some(last) = self.last_transit {
            let d = (transit - last).unsigned_abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
            self.counters.jitter_ns = self.jitter.round() as u64;
        }
        self.last_transit = Some(transit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(order: &[u64]) -> UdpCounters {
        let mut s = Sequence::default();
        order.iter().for_each(|&q| s.arrive(q));
        s.counters
    }

    #[test]
    fn gaps_are_lost_until_filled() {
        let c = run(&[0, 1, 3, 4, 7]);
        assert_eq!((c.lost, c.reordered, c.duplicates), (3, 0, 0));
        let c = run(&[0, 2, 1, 3]);
        assert_eq!((c.lost, c.reordered, c.reorder_max), (0, 1, 1));
        let c = run(&[0, 4, 1, 2, 3]);
        assert_eq!((c.lost, c.reordered, c.reorder_max), (0, 3, 3));
    }

    #[test]
    fn duplicates_are_told_from_late_arrivals() {
        let c = run(&[0, 1, 1, 2, 0, 5, 3, 3]);
        assert_eq!((c.duplicates, c.reordered, c.lost), (3, 1, 1));
    }

    #[test]
    fn a_stray_far_ahead_is_ignored_and_a_long_gap_forgets() {
        let c = run(&[0, 1 << 50, 1]);
        assert_eq!((c.lost, c.reordered), (0, 0));
        let c = run(&[0, 100_000, 5]);
        assert_eq!((c.lost, c.reordered, c.reorder_max), (99_998, 1, 99_995));
    }

    #[test]
    fn jitter_follows_rfc_3550() {
        let mut s = Sequence::default();
        s.transit(0, 100);
        assert_eq!(s.counters.jitter_ns, 0);
        s.transit(1000, 1260);
        assert_eq!(s.counters.jitter_ns, 10, "|160| / 16");
        let mut steady = Sequence::default();
        (0..100).for_each(|i| steady.transit(i * 1000, i * 1000 + 50));
        assert_eq!(steady.counters.jitter_ns, 0);
    }
}
