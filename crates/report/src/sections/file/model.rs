//! The file copy section of a report: the `file` objects of `summary` and each interval,
//! present for file copies and `null` otherwise.

use serde::{Deserialize, Serialize};

/// Bytes and time at each stage of a copy (`summary.file`, `intervals[].file`); bytes summed
/// over the ranges, times their mean.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FileStages {
    /// Bytes the sender read from its disk (0 for generated data).
    pub disk_read_bytes: u64,
    /// Bytes the receiver wrote to its disk.
    pub disk_written_bytes: u64,
    /// Sender's time blocked in disk reads, s (sendfile and splice read inside the send: then
    /// only the checksum's reads).
    pub sender_disk_s: f64,
    /// Sender's time in network sends, waiting included, s.
    pub sender_net_s: f64,
    /// Receiver's time blocked in disk writes, s.
    pub receiver_disk_s: f64,
    /// Receiver's time in network receives, waiting included, s.
    pub receiver_net_s: f64,
}

/// Where a file copy's time went (`summary.file`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FileSummary {
    /// The checksum ("xxh3" or "sha256").
    pub verify: String,
    /// True when every range's digest matched; null when a range never completed.
    pub checksum_match: Option<bool>,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Disk and network, over the whole copy.
    #[serde(flatten)]
    pub stages: FileStages,
    /// Time to stable storage and the rename into place, s (apart from the copy's rate).
    pub sync_s: f64,
    /// Percent of the source in the page cache at the start; null for generated data.
    pub cached_percent: Option<f64>,
    /// "sender's disk", "receiver's disk", "network", or "CPU".
    pub bottleneck: String,
    /// With `--compare-stream`: the memory-to-memory stream of the same path and size, run
    /// after the copy, bits/s.
    pub stream_bits_per_second: Option<f64>,
}
