//! The file copy section (`summary.file`): bytes at each stage (read from disk, sent, received,
//! written), each end's time blocked in its disk and in the network, the checksum's verdict,
//! how much of the source was in the page cache, and the stage that held the copy back.

use crate::model::Summary;
use crate::run::View;
use fathom_proto::file::{FileCounters, SendMode};
use serde::{Deserialize, Serialize};

/// A stage's share of the copy's time above which it is named the bottleneck.
const BOTTLENECK_SHARE: f64 = 0.5;

/// Where a file copy's time went (`summary.file`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FileSummary {
    /// The checksum ("xxh3" or "sha256").
    pub verify: String,
    /// True when every range's digest matched; null when a range never completed.
    pub checksum_match: Option<bool>,
    /// Bytes the sender read from its disk (0 for generated data).
    pub disk_read_bytes: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Bytes the receiver wrote to its disk.
    pub disk_written_bytes: u64,
    /// Sender's time blocked in disk reads, summed over its ranges, s (sendfile and splice
    /// read inside the send: then only the checksum's reads).
    pub sender_disk_s: f64,
    /// Sender's time in network sends, waiting included, s.
    pub sender_net_s: f64,
    /// Receiver's time blocked in disk writes, s.
    pub receiver_disk_s: f64,
    /// Receiver's time in network receives, waiting included, s.
    pub receiver_net_s: f64,
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

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Fills `summary.file` for a file copy.
pub fn fill(v: &View<'_>, summary: &mut Summary) {
    let Some(o) = &v.run.plan.file else { return };
    let (mut s, mut r) = (Vec::new(), Vec::new());
    for l in v.located.iter().flatten() {
        let last = |(end, pos): (usize, usize)| {
            v.window(end)
                .and_then(|w| w.last.flows.get(pos).copied())
                .and_then(|f| f.file)
                .unwrap_or_default()
        };
        s.push(last(l.sender));
        r.push(last(l.receiver));
    }
    let sum = |x: &[FileCounters], f: fn(&FileCounters) -> u64| x.iter().map(f).sum::<u64>();
    let flows = s.len().max(1) as f64;
    let cached = s.iter().map(|c| c.cached_bytes).sum::<Option<u64>>();
    let read = sum(&s, |c| c.disk_bytes);
    let mut f = FileSummary {
        verify: o.verify.name().into(),
        checksum_match: r
            .iter()
            .map(|c| c.verified)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.iter().all(|&ok| ok)),
        disk_read_bytes: read,
        sent_bytes: summary.total_bytes_sent,
        received_bytes: summary.total_bytes_received,
        disk_written_bytes: sum(&r, |c| c.disk_bytes),
        sender_disk_s: secs(sum(&s, |c| c.disk_ns)) / flows,
        sender_net_s: secs(sum(&s, |c| c.net_ns)) / flows,
        receiver_disk_s: secs(sum(&r, |c| c.disk_ns)) / flows,
        receiver_net_s: secs(sum(&r, |c| c.net_ns)) / flows,
        sync_s: r.iter().map(|c| secs(c.sync_ns)).fold(0.0, f64::max),
        cached_percent: cached.map(|c| {
            if o.size.unwrap_or(read) == 0 {
                100.0
            } else {
                100.0 * c as f64 / o.size.unwrap_or(read).max(1) as f64
            }
        }),
        bottleneck: String::new(),
        stream_bits_per_second: None,
    };
    f.bottleneck = bottleneck(&f, summary.seconds, o.send != SendMode::Copy);
    summary.file = Some(f);
}

/// The stage that held the copy back: the one blocked for the largest share of the copy
/// (network: both ends waiting on it), if over half; otherwise the CPU.
fn bottleneck(f: &FileSummary, seconds: f64, zero_copy: bool) -> String {
    if seconds <= 0.0 {
        return "none (nothing to copy)".into();
    }
    let sender_disk = if zero_copy { 0.0 } else { f.sender_disk_s };
    let stages = [
        ("sender's disk", sender_disk),
        ("receiver's disk", f.receiver_disk_s),
        ("network", f.sender_net_s.min(f.receiver_net_s)),
    ];
    match stages.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        Some((name, t)) if t / seconds > BOTTLENECK_SHARE => (*name).into(),
        _ => "CPU (no stage waited over half the time)".into(),
    }
}

/// The section's lines for the terminal table.
pub(crate) fn table(f: &FileSummary, copy_bps: f64, item: &mut dyn FnMut(&str, String)) {
    let verdict = match f.checksum_match {
        Some(true) => "match",
        Some(false) => "MISMATCH",
        None => "incomplete",
    };
    item("checksum", format!("{} {verdict}", f.verify));
    item(
        "file bytes",
        format!(
            "read {}, sent {}, received {}, written {}",
            f.disk_read_bytes, f.sent_bytes, f.received_bytes, f.disk_written_bytes
        ),
    );
    item(
        "sending end",
        format!(
            "disk read {:.3} s, network send {:.3} s",
            f.sender_disk_s, f.sender_net_s
        ),
    );
    item(
        "receiving end",
        format!(
            "disk write {:.3} s, network receive {:.3} s, sync+rename {:.3} s",
            f.receiver_disk_s, f.receiver_net_s, f.sync_s
        ),
    );
    if let Some(c) = f.cached_percent {
        item(
            "page cache",
            format!("{c:.0}% of the source cached at the start"),
        );
    }
    item("bottleneck", f.bottleneck.clone());
    if let Some(bps) = f.stream_bits_per_second {
        item(
            "stream beside",
            format!(
                "{} memory to memory on the same path; the copy ran at {:.0}% of it",
                crate::table::rate(bps),
                100.0 * crate::build::ratio(copy_bps, bps)
            ),
        );
    }
}
