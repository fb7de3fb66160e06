//! The profile section of a report: the `profile` object of `summary`, present for profile
//! groups only (a key schema 2 documents of other kinds never carry).

use crate::model::Latency;
use serde::{Deserialize, Serialize};

/// A profile group's figures over the whole test (`summary.profile`): what each end moved,
/// the iterations, their latency, and every flow operation's counts at both ends.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ProfileSummary {
    /// Iterations the connecting ends completed.
    pub iterations: u64,
    /// Iterations per second over the measured window.
    pub iterations_per_second: f64,
    /// The connecting ends (running the program as written).
    pub client: ProfileEnd,
    /// The agent (running its mirror).
    pub server: ProfileEnd,
    /// Each iteration's time at the connecting ends, µs.
    pub latency_us: Option<Latency>,
    /// The flow operations, in program order (the first `PROFILE_OPS` of them).
    pub ops: Vec<ProfileOp>,
    /// Each transaction's iteration time at the connecting ends, in program order (absent when
    /// no iteration was timed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<TransactionLatency>,
}

/// One transaction's iteration time, from the intervals in which only it ran.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TransactionLatency {
    /// Its place in the program, from 1.
    pub transaction: usize,
    /// Iterations timed.
    pub samples: u64,
    /// Their time, µs (`null` when none was timed).
    pub latency_us: Option<Latency>,
    /// Their trimmed mean, µs: the slowest 5% dropped (the IPPM
    /// responsiveness draft's, [`super::responsiveness::trimmed_mean`]).
    pub trimmed_mean_us: Option<f64>,
}

/// What one end of a group moved over the whole test.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileEnd {
    /// Payload bytes written.
    pub sent: u64,
    /// Payload bytes read.
    pub received: u64,
    /// Iterations completed.
    pub iterations: u64,
}

/// One flow operation's counts at both ends, summed over the group's flows.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ProfileOp {
    /// Its transaction, from 1.
    pub transaction: usize,
    /// Its name as the program says it ("write").
    pub name: String,
    /// At the connecting ends.
    pub client: OpFigures,
    /// At the agent (its mirror: a write there is a read).
    pub server: OpFigures,
    /// A datagram operation (`sendto`, `recv`): datagrams the sending end sent that the
    /// receiving end never got (absent for other operations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
}

/// A flow operation's counts at one end.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct OpFigures {
    /// Times it completed.
    pub count: u64,
    /// Payload bytes it moved.
    pub bytes: u64,
    /// Its mean time, µs (0 when it never completed).
    pub mean_us: f64,
    /// Times it failed and was let go (`can_fail`), or, for a datagram the end waited for,
    /// times it did not come in time.
    #[serde(default)]
    pub failed: u64,
    /// Its times, µs (none when it never completed).
    #[serde(default)]
    pub latency_us: Option<Latency>,
    /// Their trimmed mean, µs, as the iterations' (absent when it never completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trimmed_mean_us: Option<f64>,
}

/// A profile group's figures of one interval (`intervals[].profile`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ProfileInterval {
    /// Iterations the connecting ends completed per second.
    pub iterations_per_second: f64,
    /// Median iteration time, µs (`null` when none ended in the interval).
    pub latency_p50_us: Option<f64>,
    /// 90th-percentile iteration time, µs.
    pub latency_p90_us: Option<f64>,
    /// Payload the connecting ends read, bits/s (the interval's receiver figures are the
    /// agent's).
    pub client_received_bits_per_second: f64,
    /// Each flow operation's figures of the interval, in program order (the first
    /// `PROFILE_OPS` of them; absent in runs stored before they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpInterval>,
}

/// One flow operation's figures of one interval at both ends, summed over the group's flows.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct OpInterval {
    /// At the connecting ends.
    pub client: OpSpan,
    /// At the agent (its mirror).
    pub server: OpSpan,
}

/// A flow operation's figures of one interval at one end.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct OpSpan {
    /// Times it completed in the interval.
    pub count: u64,
    /// Payload bytes it moved.
    pub bytes: u64,
    /// Times it failed (`can_fail`), or a datagram waited for did not come in time.
    pub failed: u64,
    /// Median time of the runs that completed, µs (`null` when none did).
    pub latency_p50_us: Option<f64>,
    /// Their 99th percentile, µs.
    pub latency_p99_us: Option<f64>,
}
