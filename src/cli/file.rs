//! `fathom file put|get`: a file copy's options, validated into a [`TestPlan`].
//!
//! The agent's side of a copy is written `HOST:PATH`; with no `HOST` (`:PATH`, or a path with
//! no colon) it is the in-process agent, whose files root is `--files-root` (default: the
//! current directory).

use super::common::CommonArgs;
use super::error::{ArgsError, Sets};
use super::kind::KindArgs;
use super::stream::flows;
use super::units::parse_size;
use fathom_proto::file::{FileOptions, SendMode, Verify, DIRECT_ALIGN};
use fathom_proto::plan::*;
use std::path::PathBuf;

/// Bytes per disk read and write by default.
pub const DEFAULT_IO: u64 = 1 << 20;

/// Which way a copy goes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// From this host to the agent: `put SRC [HOST:]PATH`.
    Put,
    /// From the agent to this host: `get [HOST:]PATH DST`.
    Get,
}

/// `fathom file put|get`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
The agent's side is HOST:PATH (PATH below the agent's --files-root); without HOST (:PATH, or a
path with no colon) an in-process agent serves --files-root (default: the current directory).
Sizes take K/M/G, 1024-based.

Examples:
  fathom file put ./big.img HOST:/srv/big.img     copy a file to an agent's disk
  fathom file get HOST:/srv/f ./f --io 960K       from the agent, 960 KB reads and writes
  fathom file put --size 1G HOST:x                generated data, no source file
  fathom file put f HOST:f --fsync --direct       time to stable storage; O_DIRECT I/O
  fathom file put f HOST:f --sendfile -P 4        sendfile, four ranges on four connections")]
pub struct FileArgs {
    /// put or get.
    #[arg(value_enum)]
    pub op: Op,
    /// put: the local source (or the agent's path, with --size); get: the agent's HOST:PATH.
    #[arg(value_name = "SRC")]
    pub src: String,
    /// put: the agent's HOST:PATH; get: the local destination.
    #[arg(value_name = "DST")]
    pub dst: Option<String>,
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Bytes per disk read and write, on both ends (default 1M).
    #[arg(long, value_parser = parse_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub io: Option<u64>,
    /// put: send this many bytes of generated data instead of a file.
    #[arg(long, value_parser = parse_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<u64>,
    /// The sender uses sendfile().
    #[arg(long, conflicts_with = "splice")]
    pub sendfile: bool,
    /// splice() through a pipe on both ends: file → socket, and socket → file.
    #[arg(long)]
    pub splice: bool,
    /// O_DIRECT on both ends (--io must be a multiple of 4K).
    #[arg(long)]
    pub direct: bool,
    /// The receiver syncs the file to stable storage before renaming it into place.
    #[arg(long)]
    pub fsync: bool,
    /// Replace an existing destination file.
    #[arg(long)]
    pub force: bool,
    /// The end-to-end checksum: xxh3 (fast) or sha256.
    #[arg(long, default_value = "xxh3", value_parser = ["xxh3", "sha256"], value_name = "ALGO")]
    pub verify: String,
    /// Evict the source file from the page cache before the copy (posix_fadvise DONTNEED).
    #[arg(long)]
    pub drop_cache: bool,
    /// After the copy, run the memory-to-memory stream of the same path, size, connections and
    /// I/O size, and show the copy's rate beside it.
    #[arg(long)]
    pub compare_stream: bool,
    /// The in-process agent's files root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub files_root: Option<PathBuf>,
}

/// `HOST[:PORT]:PATH` → (host, path), split at the last colon before the first slash; no
/// host for `:PATH` or a path with no colon before its first slash.
pub fn split_remote(s: &str) -> (Option<String>, String) {
    let at = s[..s.find('/').unwrap_or(s.len())].rfind(':');
    match at {
        Some(i) if i > 0 => (Some(s[..i].to_string()), s[i + 1..].to_string()),
        Some(_) => (None, s[1..].to_string()),
        None => (None, s.to_string()),
    }
}

impl FileArgs {
    /// (local path, the agent's side as typed) for the operation; `None` local with --size.
    fn sides(&self) -> Result<(Option<String>, String), ArgsError> {
        let err = ArgsError::flag;
        match (self.op, &self.dst, self.size) {
            (Op::Put, None, Some(_)) => Ok((None, self.src.clone())),
            (Op::Put, Some(d), None) => Ok((Some(self.src.clone()), d.clone())),
            (Op::Put, Some(_), Some(_)) => Err(err(
                "--size",
                "generated data has no source file; give only the destination",
            )),
            (Op::Put, None, None) => Err(err(
                "file put",
                "give SRC and [HOST:]PATH, or --size SIZE and [HOST:]PATH",
            )),
            (Op::Get, Some(d), None) => Ok((Some(d.clone()), self.src.clone())),
            (Op::Get, _, Some(_)) => Err(err("--size", "only a put generates data")),
            (Op::Get, None, None) => Err(err("file get", "give [HOST:]PATH and DST")),
        }
    }

    /// The agent's host (none: the in-process agent), and the common options naming it. With
    /// `--server S --clients C` the copy runs between two agents (C's end is the local one,
    /// below C's files root), and the path names no host.
    pub fn common(&self) -> Result<CommonArgs, ArgsError> {
        let (local, remote) = self.sides()?;
        let mut c = self.common.clone();
        let (host, _) = split_remote(&remote);
        if c.server.is_some() || !c.clients.is_empty() {
            if c.server.is_none() || c.clients.len() != 1 || host.is_some() || c.host.is_some() {
                return Err(ArgsError::flag(
                    "--clients",
                    "a copy between agents takes --server S --clients C and a path without HOST",
                ));
            }
            if self.op == Op::Put && local.is_some() {
                return Err(ArgsError::flag(
                    "--clients",
                    "a put between agents sends generated data; give --size",
                ));
            }
            return Ok(c);
        }
        if c.host.is_some() {
            return Err(ArgsError::flag(
                "file",
                "name the agent in the path (HOST:PATH), not with HOST",
            ));
        }
        c.host = host;
        Ok(c)
    }

    /// Validates the options into a plan of kind `file`; errors name the flag.
    pub fn plan(&self) -> Result<TestPlan, ArgsError> {
        let c = &self.common;
        c.validate()?;
        let (local, remote) = self.sides()?;
        let io = self.io.unwrap_or(DEFAULT_IO);
        if io == 0 || io > u64::from(fathom_proto::validate::MAX_IO) {
            return Err(ArgsError::flag(
                "--io",
                format!("{io} bytes; give 1 byte to 64M"),
            ));
        }
        if self.direct && !io.is_multiple_of(u64::from(DIRECT_ALIGN)) {
            return Err(ArgsError::flag(
                "--io",
                format!("{io} bytes is not a multiple of {DIRECT_ALIGN}, as --direct needs"),
            ));
        }
        if self.direct && (self.sendfile || self.splice) {
            return Err(ArgsError::flag(
                "--direct",
                "reads through the page cache are what --sendfile and --splice use; pick one",
            ));
        }
        let size = match (self.op, &local, self.size) {
            (Op::Put, _, Some(n)) => Some(n),
            (Op::Put, Some(src), None) => Some(source_size(src)?),
            (Op::Put, None, None) | (Op::Get, _, _) => None,
        };
        let io = io as u32;
        let (client, server) = c.sides();
        super::common::checked(TestPlan {
            flows: flows(c.connections(), self.op == Op::Get, false),
            limit: Limit::Bytes(size.unwrap_or(fathom_proto::file::MAX_FILE).max(1)),
            interval_ns: c.interval,
            socket: c.socket(),
            write_size: io,
            read_size: io,
            zerocopy: self.size.is_some() && (self.sendfile || self.splice),
            kind: KindPlan::File(FileOptions {
                path: split_remote(&remote).1,
                local,
                size,
                io,
                send: match (self.sendfile, self.splice) {
                    (true, _) => SendMode::Sendfile,
                    (_, true) => SendMode::Splice,
                    _ => SendMode::Copy,
                },
                direct: self.direct,
                fsync: self.fsync,
                force: self.force,
                verify: if self.verify == "sha256" {
                    Verify::Sha256
                } else {
                    Verify::Xxh3
                },
                drop_cache: self.drop_cache,
            }),
            client,
            server,
            ..TestPlan::default()
        })
    }
}

/// The plan fields a copy's options set.
const SETS: &[Sets] = &[
    Sets::by(&["file.io", "write_size", "read_size"], &["io"]),
    Sets::by(&["file.size", "limit.bytes"], &["size"]),
    Sets::by(&["file.path", "file.local"], &["src", "dst"]),
    Sets::by(&["file.direct"], &["direct"]),
];

impl KindArgs for FileArgs {
    fn plan_for(&self, _: KindId) -> Result<TestPlan, ArgsError> {
        self.plan()
    }

    fn sets(&self) -> &'static [Sets] {
        SETS
    }

    fn run_common(&self, _: &CommonArgs) -> Result<CommonArgs, ArgsError> {
        self.common()
    }

    fn discovery(&self) -> Result<(), ArgsError> {
        match self.common.discovery.agents_from {
            Some(_) => Err(ArgsError::flag(
                "--agents-from",
                "file copies run between two named ends; name the agent in the path",
            )),
            None => Ok(()),
        }
    }
}

/// The memory-to-memory stream beside a copy: the same flows and I/O size, moving the bytes the
/// copy moved.
pub fn stream_beside(copy: &TestPlan, bytes: u64) -> TestPlan {
    TestPlan {
        kind: KindPlan::Stream,
        limit: Limit::Bytes(bytes.max(1)),
        zerocopy: false,
        ..copy.clone()
    }
}

/// The size of a put's source, which must be a regular file.
fn source_size(src: &str) -> Result<u64, ArgsError> {
    let err = |reason: String| ArgsError::File {
        path: src.into(),
        reason,
    };
    let m = std::fs::metadata(src).map_err(|e| err(e.to_string()))?;
    if !m.is_file() {
        return Err(err("not a regular file".into()));
    }
    Ok(m.len())
}

#[cfg(test)]
mod tests {
    use super::split_remote;

    #[test]
    fn remote_paths_split_at_the_host() {
        let s = |h: Option<&str>, p: &str| (h.map(String::from), p.to_string());
        assert_eq!(split_remote("h:/srv/x"), s(Some("h"), "/srv/x"));
        assert_eq!(split_remote("h:5301:/x"), s(Some("h:5301"), "/x"));
        assert_eq!(split_remote("h:rel"), s(Some("h"), "rel"));
        assert_eq!(
            split_remote("127.0.0.1:5301:../x"),
            s(Some("127.0.0.1:5301"), "../x")
        );
        assert_eq!(split_remote("[::1]:5301:/x"), s(Some("[::1]:5301"), "/x"));
        assert_eq!(
            split_remote("127.0.0.1:5301:../x"),
            s(Some("127.0.0.1:5301"), "../x")
        );
        assert_eq!(split_remote("[::1]:5301:/x"), s(Some("[::1]:5301"), "/x"));
        assert_eq!(split_remote(":/x"), s(None, "/x"));
        assert_eq!(split_remote("dir/a:b"), s(None, "dir/a:b"));
        assert_eq!(split_remote("x"), s(None, "x"));
    }
}
