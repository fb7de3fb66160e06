//! Transaction latencies: an HDR histogram per worker, recorded under an uncontended lock and
//! swapped out by the sampler at every boundary. Histograms serialize (HDR V2) and merge, so
//! percentiles can be computed over any span, across flows, workers and hosts.

use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use std::sync::Mutex;

/// Significant figures kept: values are exact to 0.1%.
const SIGFIG: u8 = 3;

/// A new empty histogram of nanoseconds (1 ns to about 1 hour, resizing beyond).
pub fn histogram() -> Histogram<u64> {
    let mut h = Histogram::new(SIGFIG).expect("3 significant figures are valid");
    h.auto(true);
    h
}

/// One worker's latencies since the sampler last took them.
pub struct Latency {
    hist: Mutex<Histogram<u64>>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: Mutex::new(histogram()),
        }
    }
}

impl Latency {
    /// Records one transaction's latency.
    #[inline]
    pub fn record(&self, ns: u64) {
        let mut h = self.hist.lock().unwrap_or_else(|p| p.into_inner());
        let _ = h.record(ns.max(1));
    }

    /// Adds everything recorded since the last call to `into`, and starts afresh.
    pub fn drain_into(&self, into: &mut Histogram<u64>) {
        let mut h = self.hist.lock().unwrap_or_else(|p| p.into_inner());
        let _ = into.add(&*h);
        h.reset();
    }
}

/// HDR V2 bytes of `h`.
pub fn serialize(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}
