//! The file copy causes: a copy whose time went to a disk (the report's `file.bottleneck` and
//! its stage times), and, with small I/O, the I/O size.

use super::found::Found;
use crate::{Confidence, Severity};
use fathom_report::model::Report;
use fathom_units::size;

/// I/O calls smaller than this cost a system call (and a disk request) per few pages, bytes.
const SMALL_IO: u32 = 64 * 1024;

/// The file findings of run `r`.
pub(super) fn findings(r: &Report) -> Vec<Found> {
    let Some(f) = r.summary.file() else {
        return Vec::new();
    };
    let st = &f.stages;
    let (disk_s, net_s, side) = match f.bottleneck.as_str() {
        "sender's disk" => (st.sender_disk_s, st.sender_net_s, "sender"),
        "receiver's disk" => (st.receiver_disk_s, st.receiver_net_s, "receiver"),
        _ => return Vec::new(),
    };
    if disk_s <= net_s {
        return Vec::new();
    }
    let io = r.test.write_size;
    let figures = vec![
        ("disk_s", disk_s),
        ("net_s", net_s),
        ("io_bytes", f64::from(io)),
        ("bytes", f.received_bytes as f64),
    ];
    let seen = format!(
        "the {side} spent {disk_s:.2} s in its disk and {net_s:.2} s in the network over {} copied, with {} per I/O call",
        size::human(f.received_bytes),
        size::human(io.into())
    );
    let mut out = Vec::new();
    if io > 0 && io < SMALL_IO {
        out.push(Found {
            id: "file_io_size",
            severity: Severity::Warning,
            confidence: Confidence::Medium,
            seen: seen.clone(),
            figures: figures.clone(),
            why: format!(
                "each {} call is a system call and, uncached or with --direct, a disk request: small I/O keeps the disk's queue short and pays a fixed cost per call",
                size::human(io.into())
            ),
            change: "--io 1M (the classic rcp/ftp figures: 960 KB I/O beats 16 KB)".into(),
        });
    }
    out.push(Found {
        id: "file_disk",
        severity: Severity::Warning,
        confidence: Confidence::Medium,
        seen,
        figures,
        why: format!("the {side}'s disk took longer than the network: the copy ran at the disk's rate"),
        change: format!("a faster disk (or the page cache: a file read twice is cached) on the {side}; compare the network alone with --compare-stream"),
    });
    out
}
