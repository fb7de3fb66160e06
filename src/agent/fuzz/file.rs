//! The `file` fuzz target's entry point: the receiving end of a file copy, as an agent runs it,
//! fed a peer's options, ranges and digests from bytes, and the target's seeds.

use crate::agent::AgentConfig;
use fathom_engine::{Prepared, Side, Sockets};
use fathom_proto::file::{FileOptions, SendMode, Verify};
use fathom_proto::plan::{Direction, FlowPlan, KindPlan, Limit, TestPlan};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest a fuzzed copy may run before it is aborted.
const FILE_DEADLINE: Duration = Duration::from_secs(2);

/// Distinguishes the files roots of one process's fuzzed copies.
static FILE_RUNS: AtomicU64 = AtomicU64::new(0);

/// Runs the receiving end of a file copy (a put to an agent) as an agent would run it, with its
/// senders replaced by `input`: byte 0 picks the options a peer's Setup or Join carries (bit 0
/// SHA-256 instead of XXH3, bits 1–2 one to four flows, bit 3 splice, bit 4 force), bytes 1–2
/// the I/O size (little-endian, plus one), bytes 3–6 the file's size (little-endian, modulo
/// 1 MiB + 1); then each flow's bytes (range header, data, digest; see `fathom_proto::file`),
/// each a 2-byte little-endian length and that many bytes. The plan goes through the agent's
/// admission first; the file lands below a fresh files root, removed afterwards.
pub fn fuzz_file(input: &[u8]) {
    let Some((head, mut rest)) = input.split_first_chunk::<7>() else {
        return;
    };
    let plan = file_plan(head);
    if AgentConfig::default()
        .admit(&plan, &plan.server, plan.flows.len())
        .is_err()
    {
        return;
    }
    let streams: Vec<Vec<u8>> = plan.flows.iter().map(|_| take(&mut rest)).collect();
    let root = std::env::temp_dir().join(format!(
        "fathom-fuzz-file-{}-{}",
        std::process::id(),
        FILE_RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::create_dir(&root).is_ok() {
        let _ = receive(&root, plan, streams);
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The plan of a put that `head` (see [`fuzz_file`]) describes.
fn file_plan(head: &[u8; 7]) -> TestPlan {
    let flows = 1 + u32::from((head[0] >> 1) & 3);
    let io = u32::from(u16::from_le_bytes([head[1], head[2]])) + 1;
    let size =
        u64::from(u32::from_le_bytes([head[3], head[4], head[5], head[6]])) % ((1 << 20) + 1);
    TestPlan {
        kind: KindPlan::File(FileOptions {
            path: "f".into(),
            local: None,
            size: Some(size),
            io,
            send: if head[0] & 8 != 0 {
                SendMode::Splice
            } else {
                SendMode::Copy
            },
            direct: false,
            fsync: false,
            force: head[0] & 16 != 0,
            verify: if head[0] & 1 != 0 {
                Verify::Sha256
            } else {
                Verify::Xxh3
            },
            drop_cache: false,
        }),
        flows: (0..flows)
            .map(|id| FlowPlan {
                id,
                dir: Direction::Forward,
            })
            .collect(),
        limit: Limit::Bytes(size.max(1)),
        write_size: io,
        read_size: io,
        ..TestPlan::default()
    }
}

/// The next length-prefixed part of `rest` (what is left when it is short).
fn take(rest: &mut &[u8]) -> Vec<u8> {
    let Some((len, tail)) = rest.split_first_chunk::<2>() else {
        return std::mem::take(rest).to_vec();
    };
    let n = usize::from(u16::from_le_bytes(*len)).min(tail.len());
    let (part, tail) = tail.split_at(n);
    *rest = tail;
    part.to_vec()
}

/// Runs the receiving end below `root` over loopback connections whose peers send `streams`,
/// then close; aborted after [`FILE_DEADLINE`]. Ok(true) when it ended without an error.
fn receive(root: &Path, plan: TestPlan, streams: Vec<Vec<u8>>) -> io::Result<bool> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let (mut socks, mut peers) = (Vec::new(), Vec::new());
    for f in &plan.flows {
        peers.push(TcpStream::connect(listener.local_addr()?)?);
        socks.push((*f, socket2::Socket::from(listener.accept()?.0)));
    }
    let ids = plan.flows.iter().map(|f| f.id).collect();
    let end = (Side::Server, Some(root));
    let prepared = Prepared::new(Arc::new(plan), end, ids, Sockets::Tcp(socks), None)?;
    let running = prepared.start(fathom_engine::clock::now_ns(), Box::new(|_| {}))?;
    let aborter = running.aborter();
    for (mut peer, bytes) in peers.into_iter().zip(streams) {
        peer.set_write_timeout(Some(FILE_DEADLINE))?;
        peer.set_read_timeout(Some(FILE_DEADLINE))?;
        std::thread::spawn(move || {
            let _ = peer.write_all(&bytes);
            let _ = peer.shutdown(Shutdown::Write);
            let mut sink = [0u8; 64];
            while matches!(peer.read(&mut sink), Ok(n) if n > 0) {}
        });
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || drop(tx.send(running.join())));
    let info = rx.recv_timeout(FILE_DEADLINE);
    if info.is_err() {
        aborter.abort();
    }
    let _ = waiter.join();
    Ok(info.is_ok_and(|i| i.error.is_none()))
}

/// The seeds of the `file` target: copies whole in one and in two ranges (with read and write,
/// and with splice), an empty file, and the hostile ones: two flows with the same range, a
/// wrong digest, a range cut short, one out of bounds, bytes past the digest.
pub fn file_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let data: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let range = |off: u64, len: u64, total: u64, digest: bool| {
        let mut b = Vec::new();
        for v in [off, len, total] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let bytes = &data[off as usize..(off + len) as usize];
        b.extend_from_slice(bytes);
        if digest {
            b.extend_from_slice(&twox_hash::XxHash3_64::oneshot(bytes).to_le_bytes());
        }
        b
    };
    let seed = |opts: u8, io: u16, size: u32, flows: Vec<Vec<u8>>| {
        let mut b = vec![opts];
        b.extend_from_slice(&(io - 1).to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        for f in flows {
            b.extend_from_slice(&(f.len() as u16).to_le_bytes());
            b.extend_from_slice(&f);
        }
        b
    };
    let whole = range(0, 10_000, 10_000, true);
    let mut bad = whole.clone();
    *bad.last_mut().expect("a digest") ^= 1;
    let mut past = whole.clone();
    past.push(0);
    vec![
        ("whole", seed(0, 4096, 10_000, vec![whole.clone()])),
        ("whole-splice", seed(8, 4096, 10_000, vec![whole.clone()])),
        (
            "two-ranges",
            seed(
                2,
                4096,
                10_000,
                vec![
                    range(0, 8192, 10_000, true),
                    range(8192, 1808, 10_000, true),
                ],
            ),
        ),
        ("empty", seed(0, 4096, 0, vec![range(0, 0, 0, true)])),
        (
            "same-range",
            seed(
                2,
                5000,
                10_000,
                vec![range(0, 5000, 10_000, true), range(0, 5000, 10_000, true)],
            ),
        ),
        ("bad-digest", seed(0, 4096, 10_000, vec![bad])),
        (
            "cut-short",
            seed(0, 4096, 10_000, vec![whole[..100].to_vec()]),
        ),
        (
            "out-of-bounds",
            seed(0, 4096, 10_000, vec![range(9_000, 1_000, 9_500, false)]),
        ),
        ("past-the-digest", seed(0, 4096, 10_000, vec![past])),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_seeds_commit_their_file_and_hostile_ones_commit_nothing() {
        for (name, input) in file_seeds() {
            let (head, mut rest) = input.split_first_chunk::<7>().expect("a seed's head");
            let plan = file_plan(head);
            let streams = plan.flows.iter().map(|_| take(&mut rest)).collect();
            let root = tempfile::tempdir().expect("a files root");
            let ok = receive(root.path(), plan, streams).expect("loopback");
            let whole = ["whole", "whole-splice", "two-ranges", "empty"].contains(&name);
            assert_eq!(ok, whole, "{name}");
            let file = std::fs::read(root.path().join("f")).ok();
            assert_eq!(file.is_some(), whole, "{name}");
            assert_eq!(
                std::fs::read_dir(root.path()).unwrap().count(),
                usize::from(whole)
            );
        }
    }
}
