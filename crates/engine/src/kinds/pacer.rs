//! When the asking side of a request/response flow may issue its next request: closed loop (a
//! fixed number in flight) or open loop (on a schedule, latency counted from the scheduled instant
//! so that a stall shows in the latencies instead of silently delaying the schedule).

use fathom_proto::plan::{Limit, RrOptions, TestPlan};

/// Requests in flight at most in open loop, so a dead path cannot exhaust memory.
const OPEN_LOOP_CAP: usize = 65_536;

/// Issues requests for one flow.
pub struct Pacer {
    remaining: u64,
    in_flight: usize,
    cap: usize,
    interval_ns: Option<u64>,
    /// Before the first request: this flow's offset into the schedule; after: the next instant.
    next_at: u64,
    started: bool,
}

impl Pacer {
    /// The pacer of a flow that is `index` of `flows` asking flows in `plan`; its schedule starts
    /// at its first [`issue`](Self::issue).
    pub fn new(plan: &TestPlan, rr: &RrOptions, index: u64, flows: u64) -> Pacer {
        let remaining = match plan.limit {
            Limit::Transactions(n) => TestPlan::share(n, index, flows),
            _ => u64::MAX,
        };
        let cap = match rr.rate {
            Some(_) => OPEN_LOOP_CAP,
            None => rr.burst.max(1) as usize,
        };
        Pacer::schedule(remaining, rr.rate, cap, index, flows)
    }

    /// A pacer issuing `remaining` units, at most `cap` in flight, at `rate` per second over
    /// `flows` flows (this one `index` of them; `None`: as fast as allowed).
    pub fn schedule(
        remaining: u64,
        rate: Option<f64>,
        cap: usize,
        index: u64,
        flows: u64,
    ) -> Pacer {
        let interval_ns = rate
            .filter(|r| *r > 0.0)
            .map(|r| ((1e9 * flows as f64 / r).round() as u64).max(1));
        // Spread the flows' schedules over one interval so they do not all send at once.
        let offset = interval_ns.map_or(0, |iv| iv * index / flows.max(1));
        Pacer {
            remaining,
            in_flight: 0,
            cap,
            interval_ns,
            next_at: offset,
            started: false,
        }
    }

    /// The capacity a flow needs for its in-flight bookkeeping.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// If a request may go now, its start instant (the scheduled one in open loop).
    pub fn issue(&mut self, now: u64) -> Option<u64> {
        if !self.started {
            self.started = true;
            self.next_at += now;
        }
        if self.remaining == 0 || self.in_flight >= self.cap {
            return None;
        }
        let start = match self.interval_ns {
            None => now,
            Some(iv) if now >= self.next_at => {
                let t = self.next_at;
                self.next_at += iv;
                t
            }
            Some(_) => return None,
        };
        self.remaining -= 1;
        self.in_flight += 1;
        Some(start)
    }

    /// Gives back a request that could not be sent after all.
    pub fn unissue(&mut self) {
        self.remaining = self.remaining.saturating_add(1);
        self.in_flight -= 1;
        if let Some(iv) = self.interval_ns {
            self.next_at -= iv;
        }
    }

    /// A request was answered (or given up).
    pub fn completed(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// True when every request has been issued and answered.
    pub fn finished(&self) -> bool {
        self.remaining == 0 && self.in_flight == 0
    }

    /// True for an open loop (a rate): requests leave on a schedule, not when answers come.
    pub fn paced(&self) -> bool {
        self.interval_ns.is_some()
    }

    /// When the schedule wants the next request (open loop with room in flight).
    pub fn timer(&self) -> Option<u64> {
        self.interval_ns
            .filter(|_| self.started && self.remaining > 0 && self.in_flight < self.cap)
            .map(|_| self.next_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::plan::*;

    fn plan(limit: Limit) -> TestPlan {
        TestPlan {
            kind: KindPlan::Rr(rr(1, None)),
            limit,
            ..TestPlan::default()
        }
    }

    fn rr(burst: u32, rate: Option<f64>) -> RrOptions {
        RrOptions {
            request: 1,
            response: 1,
            burst,
            rate,
            udp_timeout_ns: 1,
            test_drop_every: None,
        }
    }

    #[test]
    fn closed_loop_keeps_burst_in_flight_and_stops_at_the_count() {
        let mut p = Pacer::new(&plan(Limit::Transactions(5)), &rr(2, None), 0, 1);
        assert_eq!(p.issue(10), Some(10));
        assert_eq!(p.issue(10), Some(10));
        assert_eq!(p.issue(10), None, "burst 2");
        p.completed();
        assert_eq!(p.issue(11), Some(11));
        p.completed();
        p.completed();
        assert!(p.issue(12).is_some() && p.issue(12).is_some());
        assert_eq!(p.issue(12), None, "5 issued");
        p.completed();
        p.completed();
        assert!(p.finished());
    }

    #[test]
    fn open_loop_counts_from_the_schedule_even_when_late() {
        // 1000 tx/s over 2 flows: each flow every 2 ms; flow 1 offset by 1 ms.
        let mut p = Pacer::new(
            &plan(Limit::Time { duration_ns: 1 }),
            &rr(1, Some(1000.0)),
            1,
            2,
        );
        assert_eq!(
            p.issue(0),
            None,
            "the schedule starts now, this flow 1 ms in"
        );
        assert_eq!(p.timer(), Some(1_000_000));
        assert_eq!(p.issue(500_000), None);
        assert_eq!(
            p.issue(7_000_000),
            Some(1_000_000),
            "a late send keeps its scheduled start"
        );
        assert_eq!(
            p.issue(7_000_000),
            Some(3_000_000),
            "and the backlog goes out at once"
        );
        assert_eq!(p.timer(), Some(5_000_000), "the schedule keeps its pace");
    }
}
