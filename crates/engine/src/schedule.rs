//! When an endpoint takes its snapshots: interval boundaries cut by real time, with the warm-up
//! and the measured window's edges as boundaries of their own.

use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::sample::Mark;

/// Snapshot instants, in ns after t0, with their marks. For byte- and transaction-limited tests
/// the list is open-ended: [`Schedule::next_after`] keeps producing interval boundaries.
#[derive(Clone, Debug)]
pub struct Schedule {
    omit: u64,
    interval: u64,
    end: Option<u64>,
}

impl Schedule {
    /// The schedule of `plan`.
    pub fn of(plan: &TestPlan) -> Self {
        let end = match plan.limit {
            Limit::Time { duration_ns } => Some(plan.omit_ns.saturating_add(duration_ns)),
            _ => None,
        };
        Schedule {
            omit: plan.omit_ns,
            interval: plan.interval_ns.max(1_000_000),
            end,
        }
    }

    /// The first snapshot: the window's start when there is no warm-up.
    pub fn first(&self) -> (u64, Mark) {
        (
            0,
            if self.omit == 0 {
                Mark::WindowStart
            } else {
                Mark::Start
            },
        )
    }

    /// The boundary after `t` (ns after t0), or `None` after the window's end.
    pub fn next_after(&self, t: u64) -> Option<(u64, Mark)> {
        if self.end.is_some_and(|e| t >= e) {
            return None;
        }
        let (base, limit, limit_mark) = if t < self.omit {
            (0, self.omit, Mark::WindowStart)
        } else {
            (self.omit, self.end.unwrap_or(u64::MAX), Mark::WindowEnd)
        };
        // Saturating: an interval near 2^64 ns must not wrap round to an instant in the past.
        let next = ((t - base) / self.interval + 1)
            .saturating_mul(self.interval)
            .saturating_add(base);
        Some(if next >= limit {
            (limit, limit_mark)
        } else {
            (next, Mark::Interval)
        })
    }

    /// The end of the measured window, if the test is timed.
    pub fn end(&self) -> Option<u64> {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(omit: u64, interval: u64, limit: Limit) -> TestPlan {
        TestPlan {
            limit,
            omit_ns: omit,
            interval_ns: interval,
            ..TestPlan::default()
        }
    }

    /// The schedule of a test with `omit` ns of warm-up and `limit`, its interval `interval` ns
    /// as set (below the plan checks' minimum, to keep the marks few).
    fn every(interval: u64, omit: u64, limit: Limit) -> Schedule {
        Schedule {
            interval,
            ..Schedule::of(&plan(omit, interval, limit))
        }
    }

    fn all(s: &Schedule) -> Vec<(u64, Mark)> {
        let mut v = vec![s.first()];
        while let Some(n) = s.next_after(v.last().unwrap().0) {
            v.push(n);
        }
        v
    }

    #[test]
    fn warm_up_and_window_edges_are_boundaries() {
        let s = every(1000, 1500, Limit::Time { duration_ns: 2500 });
        assert_eq!(
            all(&s),
            vec![
                (0, Mark::Start),
                (1000, Mark::Interval),
                (1500, Mark::WindowStart),
                (2500, Mark::Interval),
                (3500, Mark::Interval),
                (4000, Mark::WindowEnd)
            ]
        );
    }

    #[test]
    fn no_warm_up_starts_the_window_at_zero() {
        let s = every(10, 0, Limit::Time { duration_ns: 20 });
        assert_eq!(
            all(&s),
            vec![
                (0, Mark::WindowStart),
                (10, Mark::Interval),
                (20, Mark::WindowEnd)
            ]
        );
    }

    #[test]
    fn byte_limited_is_open_ended() {
        let s = every(10, 0, Limit::Bytes(5));
        assert_eq!(s.next_after(1_000_000), Some((1_000_010, Mark::Interval)));
    }

    /// D3: an interval near 2^64 ns (`-i 18446744073.7s`) must not wrap round to instants in
    /// the past, which made the sampler emit snapshots in a busy loop.
    #[test]
    fn huge_intervals_do_not_wrap() {
        let s = Schedule::of(&plan(0, 18_446_744_073_700_000_000, Limit::Bytes(5)));
        let mut t = 0;
        for _ in 0..4 {
            let (next, _) = s.next_after(t).expect("open-ended");
            assert!(next >= t, "{next} < {t}");
            t = next;
        }
        assert_eq!(t, u64::MAX);
    }
}
