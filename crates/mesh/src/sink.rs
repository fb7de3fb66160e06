//! Where a mesh's figures go besides the store: the metrics registry of `fathom_metrics`
//! (OpenMetrics, `/metrics`), whose `MeshMetrics` has these methods; the binary's adapter
//! (`src/commands/metrics.rs`) implements this trait on it, so that this crate builds without
//! that one. [`NoSink`] drops everything.

/// What became of one scheduled test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran.
    Run,
    /// It was skipped for want of a slot.
    Skipped,
    /// It failed (or a member was down).
    Failed,
}

/// The mesh's figures as metrics want them (the contract of `fathom_metrics::MeshMetrics`).
/// `source` and `peer` are member names, `test` the mesh file's test name.
pub trait Sink: Send + Sync {
    /// `source`'s peers that get pair series (its latency peers from the ring), told at the
    /// start and again whenever the members change.
    fn set_peers(&self, source: &str, sampled: &[String]);
    /// The mesh's members now, told at the start and whenever they change: every series
    /// naming a member no longer listed goes (as a source or as a peer), and figures still on
    /// their way from it (or alerts about it) are dropped, until it is listed again.
    fn members(&self, members: &[String]);
    /// One rr test's round trips: (seconds, count) pairs.
    fn rr(&self, source: &str, peer: &str, test: &str, round_trips: &[(f64, u64)]);
    /// One UDP test's datagrams sent and received.
    fn datagrams(&self, source: &str, peer: &str, test: &str, sent: u64, received: u64);
    /// One stream test's rate, with the unix time it was taken at.
    fn throughput(&self, source: &str, peer: &str, test: &str, bits_per_second: f64, at_unix: f64);
    /// An alert on (source, peer, test) raised (true) or cleared (false).
    fn alert(&self, source: &str, peer: &str, test: &str, raised: bool);
    /// A test that ran, was skipped, or failed.
    fn outcome(&self, source: &str, test: &str, outcome: Outcome);
    /// How late a test started against its due time.
    fn scheduler_lag(&self, source: &str, seconds: f64);
    /// The unix time of the last result stored.
    fn stored(&self, source: &str, at_unix: f64);
}

/// A sink that drops everything (no metrics endpoint).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSink;

impl Sink for NoSink {
    fn set_peers(&self, _: &str, _: &[String]) {}
    fn members(&self, _: &[String]) {}
    fn rr(&self, _: &str, _: &str, _: &str, _: &[(f64, u64)]) {}
    fn datagrams(&self, _: &str, _: &str, _: &str, _: u64, _: u64) {}
    fn throughput(&self, _: &str, _: &str, _: &str, _: f64, _: f64) {}
    fn alert(&self, _: &str, _: &str, _: &str, _: bool) {}
    fn outcome(&self, _: &str, _: &str, _: Outcome) {}
    fn scheduler_lag(&self, _: &str, _: f64) {}
    fn stored(&self, _: &str, _: f64) {}
}
