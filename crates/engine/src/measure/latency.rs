//! Transaction latencies: an HDR histogram per worker, recorded under an uncontended lock and
//! swapped out by the sampler at every boundary. Histograms serialize (HDR V2) and merge, so
//! percentiles can be computed over any span, across flows, workers and hosts.

use fathom_proto::plan::{KindPlan, TestPlan};
use fathom_proto::profile::PROFILE_OPS;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use std::sync::{Mutex, OnceLock};

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
    /// The profile kind's time per flow operation, in program order (made at its first use).
    ops: OnceLock<Box<[Mutex<Histogram<u64>>; PROFILE_OPS]>>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: Mutex::new(histogram()),
            ops: OnceLock::new(),
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

    /// Records one run of the profile flow operation `op` (its place in program order,
    /// below `PROFILE_OPS`).
    pub fn record_op(&self, op: usize, ns: u64) {
        let ops = self
            .ops
            .get_or_init(|| Box::new(std::array::from_fn(|_| Mutex::new(histogram()))));
        if let Some(m) = ops.get(op) {
            let mut h = m.lock().unwrap_or_else(|p| p.into_inner());
            let _ = h.record(ns.max(1));
        }
    }

    /// Adds each flow operation's times recorded since the last call to `into` (one per
    /// operation), and starts afresh; nothing if none was ever recorded.
    pub fn drain_ops_into(&self, into: &mut [Histogram<u64>]) {
        let Some(ops) = self.ops.get() else {
            return;
        };
        for (m, into) in ops.iter().zip(into) {
            let mut h = m.lock().unwrap_or_else(|p| p.into_inner());
            let _ = into.add(&*h);
            h.reset();
        }
    }
}

/// HDR V2 bytes of `h`.
pub fn serialize(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}

/// The profile kind's time per flow operation since the last call, merged over the workers'
/// `latencies`, serialized, one per operation of `plan`'s program (none for other kinds).
pub fn per_op<'a>(plan: &TestPlan, latencies: impl Iterator<Item = &'a Latency>) -> Vec<Vec<u8>> {
    let KindPlan::Profile(program) = &plan.kind else {
        return Vec::new();
    };
    let n = program
        .transactions
        .iter()
        .map(|t| t.ops.len())
        .sum::<usize>();
    let mut hists: Vec<_> = (0..n.min(PROFILE_OPS)).map(|_| histogram()).collect();
    for l in latencies {
        l.drain_ops_into(&mut hists);
    }
    hists.iter().map(serialize).collect()
}
