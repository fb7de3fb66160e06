//! A histogram that takes a value with its count, and the bucket layouts the mesh's families use.
//!
//! prometheus-client's own `Histogram` observes one value per call; an rr test hands over tens of
//! thousands of round trips as (value, count) pairs read from its HDR histogram, and observing
//! each round trip alone would take a lock per round trip. [`Weighted`] adds a pair at once and
//! is encoded through prometheus-client's encoder (`MetricEncoder::encode_histogram`), so the
//! exposition is still the library's.

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::exemplar::Exemplar;
use prometheus_client::metrics::{MetricType, TypedMetric};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// Round-trip time buckets, seconds: 1-2-5 steps from 5 µs (a loopback round trip is about
/// 10 µs) to 10 s (a WAN path in trouble), 20 bounds and `+Inf`.
pub const LATENCY_BUCKETS: [f64; 20] = [
    5e-6, 10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 0.1,
    0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
];

/// Scheduler lag buckets, seconds: 1-2-5 steps from 1 ms (on time) to 60 s (a test a whole
/// period late at the longest usual period).
pub const LAG_BUCKETS: [f64; 15] = [
    1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
];

/// A classic histogram whose observations carry a count.
#[derive(Debug)]
pub struct Weighted {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    sum: f64,
    count: u64,
    /// (upper bound, observations in this bucket alone), `+Inf` last.
    buckets: Vec<(f64, u64)>,
}

impl Weighted {
    /// An empty histogram with `bounds` (ascending, finite) and `+Inf`.
    pub fn new(bounds: &[f64]) -> Weighted {
        let buckets = bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .map(|b| (b, 0))
            .collect();
        Weighted {
            inner: Mutex::new(Inner {
                sum: 0.0,
                count: 0,
                buckets,
            }),
        }
    }

    /// A histogram of round-trip times ([`LATENCY_BUCKETS`]).
    pub fn latency() -> Weighted {
        Weighted::new(&LATENCY_BUCKETS)
    }

    /// A histogram of scheduler lags ([`LAG_BUCKETS`]).
    pub fn lag() -> Weighted {
        Weighted::new(&LAG_BUCKETS)
    }

    /// Adds `count` observations of `value`; a value that is negative, NaN or infinite is not a
    /// duration and is dropped.
    pub fn observe(&self, value: f64, count: u64) {
        if !(value.is_finite() && value >= 0.0) || count == 0 {
            return;
        }
        let mut inner = self.lock();
        let at = inner.buckets.partition_point(|(bound, _)| *bound < value);
        let last = inner.buckets.len() - 1;
        let bucket = &mut inner.buckets[at.min(last)].1;
        *bucket = bucket.saturating_add(count);
        inner.count = inner.count.saturating_add(count);
        inner.sum += value * count as f64;
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TypedMetric for Weighted {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Weighted {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let inner = self.lock();
        let none: Option<&HashMap<usize, Exemplar<NoLabelSet, f64>>> = None;
        encoder.encode_histogram(inner.sum, inner.count, &inner.buckets, none)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_lands_in_the_first_bucket_at_or_above_it_with_its_count() {
        let h = Weighted::new(&[1.0, 2.0]);
        h.observe(1.0, 3);
        h.observe(1.5, 2);
        h.observe(7.0, 1);
        h.observe(f64::NAN, 9);
        h.observe(-1.0, 9);
        h.observe(0.5, 0);
        let inner = h.lock();
        assert_eq!(inner.buckets, [(1.0, 3), (2.0, 2), (f64::INFINITY, 1)]);
        assert_eq!(inner.count, 6);
        assert_eq!(inner.sum, 3.0 + 3.0 + 7.0);
    }

    #[test]
    fn the_layouts_ascend() {
        for b in [&LATENCY_BUCKETS[..], &LAG_BUCKETS[..]] {
            assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
        }
    }
}
