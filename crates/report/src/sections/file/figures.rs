//! The file copy section (`summary.file`): bytes at each stage (read from disk, sent, received,
//! written), each end's time blocked in its disk and in the network, the checksum's verdict,
//! how much of the source was in the page cache, and the stage that held the copy back.

pub use crate::model::file::{FileStages, FileSummary};
use crate::model::{KindSummary, Summary};
use crate::run::View;
use fathom_proto::file::{FileCounters, SendMode};
use fathom_proto::sample::Snapshot;

/// A stage's share of the copy's time above which it is named the bottleneck.
const BOTTLENECK_SHARE: f64 = 0.5;

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Counters of `b` minus those of `a`; the verdict and the cache figure as in `b`.
fn delta(a: FileCounters, b: FileCounters) -> FileCounters {
    FileCounters {
        disk_bytes: b.disk_bytes.saturating_sub(a.disk_bytes),
        disk_ns: b.disk_ns.saturating_sub(a.disk_ns),
        net_ns: b.net_ns.saturating_sub(a.net_ns),
        sync_ns: b.sync_ns.saturating_sub(a.sync_ns),
        ..b
    }
}

/// Every flow's (sender, receiver) counters between the snapshots `span` gives for an end.
fn pairs<'a>(
    v: &View<'_>,
    span: impl Fn(usize) -> Option<(&'a Snapshot, &'a Snapshot)>,
) -> (Vec<FileCounters>, Vec<FileCounters>) {
    let flow = |(end, pos): (usize, usize)| {
        span(end).map_or_else(FileCounters::default, |(a, b)| {
            let get = |s: &Snapshot| s.flows.get(pos).and_then(|f| f.file()).unwrap_or_default();
            delta(get(a), get(b))
        })
    };
    v.located
        .iter()
        .flatten()
        .map(|l| (flow(l.sender), flow(l.receiver)))
        .unzip()
}

fn stages(s: &[FileCounters], r: &[FileCounters]) -> FileStages {
    let sum = |x: &[FileCounters], f: fn(&FileCounters) -> u64| x.iter().map(f).sum::<u64>();
    let flows = s.len().max(1) as f64;
    FileStages {
        disk_read_bytes: sum(s, |c| c.disk_bytes),
        disk_written_bytes: sum(r, |c| c.disk_bytes),
        sender_disk_s: secs(sum(s, |c| c.disk_ns)) / flows,
        sender_net_s: secs(sum(s, |c| c.net_ns)) / flows,
        receiver_disk_s: secs(sum(r, |c| c.disk_ns)) / flows,
        receiver_net_s: secs(sum(r, |c| c.net_ns)) / flows,
    }
}

/// One interval's stages (`intervals[].file`).
pub fn interval<'a>(
    v: &View<'_>,
    span: impl Fn(usize) -> Option<(&'a Snapshot, &'a Snapshot)>,
) -> FileStages {
    let (s, r) = pairs(v, span);
    stages(&s, &r)
}

/// Fills `summary.file` for a file copy: totals from each end's first to its last snapshot.
pub fn fill(v: &View<'_>, summary: &mut Summary) {
    let Some(o) = v.run.plan.file() else { return };
    let (s, r) = pairs(v, |end| {
        let snaps = &v.run.ends.get(end)?.snaps;
        Some((snaps.first()?, snaps.last()?))
    });
    let st = stages(&s, &r);
    let size = o.size.unwrap_or(st.disk_written_bytes);
    let mut f = FileSummary {
        verify: o.verify.name().into(),
        checksum_match: r
            .iter()
            .map(|c| c.verified)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.iter().all(|&ok| ok)),
        sent_bytes: summary.transfer.total_bytes_sent,
        received_bytes: summary.transfer.total_bytes_received,
        sync_s: r.iter().map(|c| secs(c.sync_ns)).fold(0.0, f64::max),
        cached_percent: s
            .iter()
            .map(|c| c.cached_bytes)
            .sum::<Option<u64>>()
            .map(|c| {
                if size == 0 {
                    100.0
                } else {
                    100.0 * c as f64 / size as f64
                }
            }),
        stages: st,
        bottleneck: String::new(),
        stream_bits_per_second: None,
    };
    f.bottleneck = bottleneck(&f, summary.seconds, o.send != SendMode::Copy);
    summary.section = Some(KindSummary::File(f));
}

/// The stage that held the copy back: the one blocked for the largest share of the copy
/// (network: both ends waiting on it), if over half; otherwise the CPU.
fn bottleneck(f: &FileSummary, seconds: f64, zero_copy: bool) -> String {
    if seconds <= 0.0 {
        return "none (nothing to copy)".into();
    }
    let sender_disk = if zero_copy {
        0.0
    } else {
        f.stages.sender_disk_s
    };
    let stages = [
        ("sender's disk", sender_disk),
        ("receiver's disk", f.stages.receiver_disk_s),
        (
            "network",
            f.stages.sender_net_s.min(f.stages.receiver_net_s),
        ),
    ];
    match stages.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        Some((name, t)) if t / seconds > BOTTLENECK_SHARE => (*name).into(),
        _ => "CPU (no stage waited over half the time)".into(),
    }
}
