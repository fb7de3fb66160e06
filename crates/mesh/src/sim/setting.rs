//! What a simulation is given.

use crate::spec::TestSpec;

/// A simulation's setting.
#[derive(Clone, Debug)]
pub struct Setting {
    /// How many members (named m0000, m0001, ...).
    pub members: usize,
    /// Simulated span, ns.
    pub span_ns: u64,
    /// The tests.
    pub tests: Vec<TestSpec>,
    /// Latency peers per member.
    pub peers: usize,
    /// The schedule's seed.
    pub seed: u64,
    /// A test takes this share of its slot (the rest is the setup allowance it did not need).
    pub busy_share: f64,
    /// Every n-th test started never says it finished (its slots last to their deadline).
    pub vanish_every: Option<u64>,
    /// Members down for a while: (member index, from ns, to ns).
    pub outages: Vec<(usize, u64, u64)>,
}
