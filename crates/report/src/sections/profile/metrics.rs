//! The profile's metric: iterations of the programs per second.

use crate::metric::Metric;

/// Iterations per second, all flows.
pub const ITERATIONS_PER_SECOND: Metric = Metric {
    name: "iterations_per_second",
    label: "Iterations/s",
    unit: "",
    run: Some(|r| Some(r.summary.profile()?.iterations_per_second)),
    interval: None,
};

/// The kind's metrics, in the order a series lists them.
pub const METRICS: &[Metric] = &[ITERATIONS_PER_SECOND];
