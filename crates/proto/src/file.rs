//! The file copy kind's options (`KindPlan::File`), their bounds, and its per-flow counters.
//!
//! A copy goes the way of its flows: `Forward` (put) the controller's end reads and sends and
//! the agent writes below its files root; `Reverse` (get) the other way round. Each flow carries
//! one range of the file, on its own connection:
//! ```text
//!  sender ── offset u64 LE, length u64 LE, file size u64 LE ─▶ receiver   (RANGE_HEADER bytes)
//!         ── length bytes of the file from offset ───────────▶
//!         ── digest of those bytes (8: xxh3-64 LE, 32: sha256) ▶          then the sender closes
//! ```
//! The receiver bounds every header value before use and compares the digest with its own.

use crate::bounds::{fail, PlanError, MAX_IO};
use crate::flow::{Direction, FlowPlan};
use serde::{Deserialize, Serialize};

/// Bytes of the range header at the start of every file flow.
pub const RANGE_HEADER: usize = 24;
/// The largest file a copy may move (1 PiB).
pub const MAX_FILE: u64 = 1 << 50;
/// The longest path accepted, bytes (Linux's PATH_MAX).
pub const MAX_PATH: usize = 4096;
/// Most connections (ranges) one copy may use.
pub const MAX_RANGES: usize = 256;
/// O_DIRECT I/O sizes must be multiples of this (the logical block size of common disks).
pub const DIRECT_ALIGN: u32 = 4096;

/// How the sending end moves file data into its sockets.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    /// read() into a buffer, then write() it.
    Copy,
    /// sendfile() from the file to the socket.
    Sendfile,
    /// splice() from the file into a pipe, and from the pipe to the socket.
    Splice,
}

/// The end-to-end checksum.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// XXH3-64: fast, not cryptographic.
    Xxh3,
    /// SHA-256.
    Sha256,
}

impl Verify {
    /// Bytes of its digest on the wire.
    pub fn digest_len(self) -> usize {
        match self {
            Verify::Xxh3 => 8,
            Verify::Sha256 => 32,
        }
    }

    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            Verify::Xxh3 => "xxh3",
            Verify::Sha256 => "sha256",
        }
    }
}

/// What to copy and how.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FileOptions {
    /// The file on the agent, below its files root (absolute paths must lie inside the root).
    pub path: String,
    /// The controller's own file: the source of a put (none: generated data), the destination
    /// of a get. The agent never opens it.
    pub local: Option<String>,
    /// Bytes a put moves (its source's size, or `--size`); unknown for a get.
    pub size: Option<u64>,
    /// Bytes per disk read and write, on both ends.
    pub io: u32,
    /// How the sender moves data into its sockets.
    pub send: SendMode,
    /// O_DIRECT on both ends' files, with aligned buffers.
    pub direct: bool,
    /// The receiver syncs the file before renaming it into place (timed apart).
    pub fsync: bool,
    /// The receiver may replace an existing file.
    pub force: bool,
    /// The end-to-end checksum.
    pub verify: Verify,
    /// The sender evicts its source file from the page cache before it starts.
    pub drop_cache: bool,
}

fn path_ok(field: &'static str, p: &str) -> Result<(), PlanError> {
    if p.is_empty() || p.len() > MAX_PATH || p.contains('\0') {
        return fail(
            field,
            format!(
                "a path of 1 to {MAX_PATH} bytes without NUL; got {} bytes",
                p.len()
            ),
        );
    }
    Ok(())
}

impl FileOptions {
    /// Checks the bounds, and that the copy's `flows` (one range each) go one way and fit it;
    /// `tls` says whether the plan asks for TLS, which copies do not run over.
    pub(crate) fn validate(&self, flows: &[FlowPlan], tls: bool) -> Result<(), PlanError> {
        let f = self;
        path_ok("file.path", &f.path)?;
        if let Some(l) = &f.local {
            path_ok("file.local", l)?;
        }
        if f.io == 0 || f.io > MAX_IO {
            return fail("file.io", format!("{} bytes is outside 1..={MAX_IO}", f.io));
        }
        if f.direct && !f.io.is_multiple_of(DIRECT_ALIGN) {
            return fail(
                "file.io",
                format!(
                    "{} bytes is not a multiple of {DIRECT_ALIGN}, as O_DIRECT needs",
                    f.io
                ),
            );
        }
        if f.direct && f.send != SendMode::Copy {
            return fail(
                "file.direct",
                "O_DIRECT bypasses the page cache that sendfile and splice move data through"
                    .into(),
            );
        }
        if f.size.is_some_and(|s| s > MAX_FILE) {
            return fail("file.size", format!("at most {MAX_FILE} bytes"));
        }
        if tls {
            return fail("tls", "file copies run in clear".into());
        }
        if flows.len() > MAX_RANGES {
            return fail(
                "flows",
                format!("a copy uses at most {MAX_RANGES} connections"),
            );
        }
        let dir = flows.first().map_or(Direction::Forward, |x| x.dir);
        if flows.iter().any(|x| x.dir != dir) {
            return fail(
                "flows.dir",
                "every range of a copy goes the same way".into(),
            );
        }
        match (dir, f.size, &f.local) {
            (Direction::Forward, None, _) => fail("file.size", "a put needs its size".into()),
            (Direction::Reverse, _, None) => fail("file.local", "a get needs a destination".into()),
            _ => Ok(()),
        }
    }
}

/// One file flow's cumulative counters at a snapshot (`FlowSnapshot::file`); the sender fills
/// the disk-read side, the receiver the disk-write side.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileCounters {
    /// Bytes read from (sender) or written to (receiver) the file.
    pub disk_bytes: u64,
    /// Time blocked in those reads or writes, ns (sendfile and splice read inside the send).
    pub disk_ns: u64,
    /// Time in network sends (sender) or receives (receiver), waiting for the socket included, ns.
    pub net_ns: u64,
    /// Receiver: time to make the file stable (fsync) and rename it into place, ns.
    pub sync_ns: u64,
    /// Sender: bytes of its range in the page cache when it started (mincore); none for
    /// generated data.
    pub cached_bytes: Option<u64>,
    /// Receiver: whether the digest matched (none until the range is complete).
    pub verified: Option<bool>,
}
