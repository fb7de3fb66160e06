//! The request/response kinds' metrics: transactions and connections per second, latency
//! percentiles and the CPU a transaction costs.

use crate::metric::Metric;
use crate::model::{Latency, Report};

/// Transactions per second.
pub const TRANSACTIONS_PER_SECOND: Metric = Metric {
    name: "transactions_per_second",
    label: "Transactions/s",
    unit: "",
    run: Some(|r| Some(r.summary.rr()?.transactions_per_second)),
    interval: Some(|iv| Some(iv.rr()?.transactions_per_second)),
};

/// New connections per second (crr).
pub const CONNECTIONS_PER_SECOND: Metric = Metric {
    name: "connections_per_second",
    label: "Connections/s",
    unit: "",
    run: Some(|r| r.summary.rr()?.connections_per_second),
    interval: None,
};

/// Median transaction latency.
pub const LATENCY_P50_US: Metric = Metric {
    name: "latency_p50_us",
    label: "Latency p50",
    unit: "µs",
    run: Some(|r| Some(latency(r)?.p50)),
    interval: Some(|iv| iv.rr()?.latency_p50_us),
};

/// 90th percentile of transaction latency.
pub const LATENCY_P90_US: Metric = Metric {
    name: "latency_p90_us",
    label: "Latency p90",
    unit: "µs",
    run: Some(|r| Some(latency(r)?.p90)),
    interval: None,
};

/// 99th percentile of transaction latency.
pub const LATENCY_P99_US: Metric = Metric {
    name: "latency_p99_us",
    label: "Latency p99",
    unit: "µs",
    run: Some(|r| Some(latency(r)?.p99)),
    interval: Some(|iv| iv.rr()?.latency_p99_us),
};

/// 99.9th percentile of transaction latency.
pub const LATENCY_P999_US: Metric = Metric {
    name: "latency_p999_us",
    label: "Latency p99.9",
    unit: "µs",
    run: Some(|r| Some(latency(r)?.p999)),
    interval: None,
};

/// Mean transaction latency.
pub const LATENCY_MEAN_US: Metric = Metric {
    name: "latency_mean_us",
    label: "Mean latency",
    unit: "µs",
    run: Some(|r| Some(latency(r)?.mean)),
    interval: None,
};

/// CPU µs per transaction on the controller's host.
pub const CPU_US_PER_TRANSACTION_LOCAL: Metric = Metric {
    name: "cpu_us_per_transaction_local",
    label: "CPU per transaction, local",
    unit: "µs",
    run: Some(|r| Some(r.summary.rr()?.cpu_us_per_transaction.local)),
    interval: None,
};

/// The kinds' metrics, in the order a series lists them.
pub const METRICS: &[Metric] = &[
    TRANSACTIONS_PER_SECOND,
    CONNECTIONS_PER_SECOND,
    LATENCY_P50_US,
    LATENCY_P90_US,
    LATENCY_P99_US,
    LATENCY_P999_US,
    LATENCY_MEAN_US,
    CPU_US_PER_TRANSACTION_LOCAL,
];

/// The run's latency percentiles, when a transaction completed.
fn latency(r: &Report) -> Option<&Latency> {
    r.summary.rr()?.latency_us.as_ref()
}
