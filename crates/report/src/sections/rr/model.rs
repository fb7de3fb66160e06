//! The request/response section of a report: the `rr` objects of `test`, `summary`, each flow
//! and each interval, present for the request/response kinds and `null` otherwise. The figures
//! one kind adds (`connections_per_second`, `lost`, `segments_per_transaction`) are `null` for
//! the kinds whose descriptor does not list them.

use crate::model::ServiceDemand;
use serde::{Deserialize, Serialize};

/// The request/response options, as run (`test.rr`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RrTest {
    /// Request size, bytes.
    pub request_size: u32,
    /// Response size, bytes.
    pub response_size: u32,
    /// Transactions in flight per connection (closed loop; `null` in open loop).
    pub burst: Option<u32>,
    /// Scheduled transactions per second (open loop).
    pub rate: Option<f64>,
    /// Transactions requested with `-n`.
    pub transactions: Option<u64>,
    /// Kinds that report losses: the timeout after which a transaction is lost, ms.
    pub udp_timeout_ms: Option<f64>,
}

/// Request/response figures over the measured window (`summary.rr`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RrSummary {
    /// Transactions completed by the asking side(s) in the window.
    pub transactions: u64,
    /// Transactions per second.
    pub transactions_per_second: f64,
    /// crr: connections opened (and closed) per second, one per transaction.
    pub connections_per_second: Option<f64>,
    /// Requests the answering side(s) answered in the window.
    pub answered: u64,
    /// udp_rr: transactions given up after the timeout.
    pub lost: Option<u64>,
    /// Round-trip latency over the window (`null` when no transaction completed).
    pub latency_us: Option<Latency>,
    /// An estimate of the one-way latency: half the median round trip (not measured one way).
    pub one_way_estimate_us: Option<f64>,
    /// Busy CPU µs per transaction on each host.
    pub cpu_us_per_transaction: ServiceDemand,
    /// rr: segments per transaction seen by the asking sockets.
    pub segments_per_transaction: Option<SegmentsPerTransaction>,
}

/// Round-trip latency percentiles, µs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Latency {
    /// Fastest transaction.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Slowest transaction.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
}

/// Segments per transaction in each direction, from the asking sockets' TCP_INFO. About 1 in a
/// direction means ACKs ride on the data (delayed ACK piggy-backing); about 2 means separate ACKs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SegmentsPerTransaction {
    /// Segments the asker sent per transaction (requests and its ACKs).
    pub request: f64,
    /// Segments the asker received per transaction (responses and the answerer's ACKs).
    pub response: f64,
}

/// One flow's transactions over the window (`flows[].rr`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RrFlow {
    /// Transactions the flow completed in the window.
    pub transactions: u64,
    /// Its transactions per second.
    pub transactions_per_second: f64,
}

/// One interval's transactions and latency (`intervals[].rr`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RrInterval {
    /// Transactions per second.
    pub transactions_per_second: f64,
    /// Median round trip, µs (`null` when no transaction completed).
    pub latency_p50_us: Option<f64>,
    /// 99th-percentile round trip, µs.
    pub latency_p99_us: Option<f64>,
    /// udp_rr: transactions lost.
    pub lost: Option<u64>,
}
