//! Defaults an end chooses for its path when the plan leaves them open. A loopback path gets
//! its own, each with a note that the result carries: there both ends share the host's CPUs
//! and caches, and what makes loopback fast (bench/RESULTS.md, "Many streams") would cripple a
//! real path, whose bandwidth-delay product needs autotuned buffers. A real path's stream
//! receiver gets one: reads of at least [`REAL_PATH_READ`] (the result's `read_size` shows it);
//! and a clear stream of more flows than CPUs, but at most [`PER_FLOW_WORKERS`], gets a worker
//! per flow (the result's `threads` shows them), each receiver then alone on its worker and
//! waiting in its reads.
//!
//! On a loopback path a stream test gets send buffers of [`LOOPBACK_SNDBUF`], and, unless
//! either end's placement is set (`--affinity`, `--cpus`, `--threads`), worker `i` of each
//! end pinned to the `i`-th usable CPU. Both ends deal flows to workers in plan order, so each
//! flow's receiver then runs on its sender's CPU and copies data still in that CPU's cache.
//! A request/response test (rr, crr, UDP rr, and a profile, whose connections open during the
//! test: its connecting end's address, or its listener's, says whether the path is loopback)
//! gets the placement a path between two hosts has instead: each end on CPUs of its own
//! ([`apart`]: the client end the first half of the usable CPUs, the server end the rest, one
//! worker per CPU of its share). With both ends on one CPU a transaction never wakes another
//! CPU, which no network path gives: on a quiet 2-CPU machine that made `rr --size 14` 13x
//! sockperf's rate (issue 36; bench/RESULTS.md, "rr placement on loopback"), and two spinning
//! `--busy-poll` ends on one CPU waited for the scheduler's tick. A profile's TCP
//! connections get a stream's send buffers too unless the group sets a `window`: the
//! connecting end's through [`PathDefaults::sndbuf`], which reaches the kind's dialer, the
//! accepting end's from its listener, whose buffer sizes its connections inherit. Each end
//! decides alone, from the plan, its side and its own sockets, and both decide alike.

use crate::clock;
use crate::kind::{Kind, Loopback, Side, Sockets};
use fathom_proto::plan::{KindPlan, SideOptions, TestPlan};
use socket2::Socket;
use std::io;

/// The send buffer a stream's sockets get on a loopback path when the plan sets none: the
/// receiver then copies data the sender wrote a moment before, still in cache.
pub const LOOPBACK_SNDBUF: u32 = 64 << 10;

/// The smallest read a stream receiver makes on a real path when the plan sets no read size.
/// There the data arrives by the network's receive path, not from a sender on the same CPU a
/// moment before, so a read buffer that stays in L1 (the loopback default) saves nothing, and
/// larger reads make fewer calls per GB and fewer window updates for the sender to process:
/// 128 KB (iperf2's and iperf3's) rather than 64 KB, with 128 KB writes, took one stream on a
/// veth pair from 0.50 to 0.40-0.43 sender CPU-s per GB (bench/RESULTS.md, "Stream against the
/// peers, session 29").
pub const REAL_PATH_READ: u32 = 128 << 10;

/// Most flows a clear stream on a real path runs with a worker each (iperf2's thread per flow)
/// when the host has fewer CPUs than that; more flows share one worker per CPU, as everywhere.
/// Four streams on a veth pair between two namespaces on a 2-CPU host moved 1.55×, 1.23× and
/// 1.02× the two shared workers' rate in three loaded runs with a worker per flow, each
/// receiver waiting in its own reads, and the same with each end on one CPU (bench/RESULTS.md,
/// "Real paths, sixth session").
/// The agents' memory estimate counts on it (`fathom_proto::validate::PER_FLOW_WORKERS`).
pub const PER_FLOW_WORKERS: usize = fathom_proto::validate::PER_FLOW_WORKERS as usize;

/// What an end chose for its path.
#[derive(Debug, Default)]
pub struct PathDefaults {
    /// The send buffer set on every data socket.
    pub sndbuf: Option<u32>,
    /// CPUs to pin workers to, round-robin.
    pub pins: Option<Vec<u32>>,
    /// The read size of a stream's receivers on a real path.
    pub read: Option<u32>,
    /// Worker threads instead of one per CPU: a clear stream's few flows on a real path get one
    /// per flow ([`PathDefaults::worker_per_flow`]), a request/response end on loopback one per
    /// CPU of its share ([`apart`]).
    pub workers: Option<usize>,
    /// The workers are a clear stream's, one per flow; each flow's receiver then waits in its
    /// reads.
    pub worker_per_flow: bool,
    /// What was chosen and why, one line each.
    pub notes: Vec<String>,
}

/// Chooses (and applies to `sockets`) the defaults of this end (`side`) for its path.
pub fn choose(plan: &TestPlan, side: Side, sockets: &Sockets) -> io::Result<PathDefaults> {
    let mut d = PathDefaults::default();
    let v: Vec<&Socket> = match sockets {
        Sockets::Tcp(v) => v.iter().map(|(_, s)| s).collect(),
        Sockets::Tls(v) => v.iter().map(|(_, s, ..)| s).collect(),
        _ => Vec::new(),
    };
    let on_loopback = match sockets {
        Sockets::Tcp(_) | Sockets::Tls(_) => !v.is_empty() && v.iter().all(|s| is_loopback(s)),
        Sockets::Udp(u) => !u.is_empty() && u.iter().all(|(_, s)| is_loopback(s)),
        // Connections opened during the test (a profile's): where they go, or where they come.
        Sockets::Connect(to, _) => to.ip().is_loopback(),
        Sockets::Listen(l, _) => l
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .is_some_and(|a| a.ip().is_loopback()),
    };
    if on_loopback {
        spinning_apart(plan)?;
    }
    let loopback = Kind::of(plan.kind.id())?.loopback();
    if loopback == Loopback::Untouched {
        return Ok(d);
    }
    if !on_loopback {
        if !v.is_empty() {
            d.read = real_path_read(loopback, plan);
        }
        if matches!(sockets, Sockets::Tcp(_)) {
            d.workers = per_flow_workers(loopback, v.len(), crate::measure::host::online_cpus());
            d.worker_per_flow = d.workers.is_some();
        }
        return Ok(d);
    }
    if small_send_buffers(loopback, plan) {
        for sock in v {
            sock.set_send_buffer_size(LOOPBACK_SNDBUF as usize)?;
        }
        let overrides = match sockets {
            Sockets::Listen(l, _) => {
                l.set_send_buffer_size(LOOPBACK_SNDBUF as usize)?;
                "a group's window overrides"
            }
            Sockets::Connect(..) => "a group's window overrides",
            _ => "--sndbuf or --buffer overrides",
        };
        d.sndbuf = Some(LOOPBACK_SNDBUF);
        d.notes.push(format!(
            "loopback path: send buffers {}K instead of autotuned, so the receiver copies data \
             still in cache ({overrides})",
            LOOPBACK_SNDBUF >> 10
        ));
    }
    let cpus = clock::usable_cpus();
    if loopback == Loopback::EndsApart {
        if let Some(share) = apart(plan, side, &cpus) {
            d.notes.push(apart_note(&cpus));
            d.workers = Some(share.len());
            d.pins = Some(share);
        }
    } else if !placed(plan) && cpus.len() > 1 {
        d.notes.push(format!(
            "loopback path: worker i of each end on CPU i ({}), so each flow's receiver runs on \
             its sender's CPU (--affinity, --cpus or --threads overrides)",
            list(&cpus)
        ));
        d.pins = Some(cpus);
    }
    Ok(d)
}

/// Refuses a loopback test whose spinning workers would meet on a CPU ([`crate::spin`]): both
/// its ends are on this machine.
fn spinning_apart(plan: &TestPlan) -> io::Result<()> {
    let both = [Side::Client, Side::Server].map(|side| crate::spin::End {
        label: match side {
            Side::Client => "the client end's",
            Side::Server => "the server end's",
        },
        side,
    });
    match crate::spin::clash(plan, &both) {
        Some(why) => Err(io::Error::new(io::ErrorKind::InvalidInput, why)),
        None => Ok(()),
    }
}

/// True when the plan places either end's workers (`--affinity`, `--cpus`, `--threads`).
fn placed(plan: &TestPlan) -> bool {
    let set = |o: &SideOptions| o.affinity.is_some() || o.cpu_set.is_some() || o.threads.is_some();
    set(&plan.client) || set(&plan.server)
}

/// The CPUs of `cpus` that `side`'s workers get on a loopback path when its kind's ends run
/// apart ([`Loopback::EndsApart`]) and the plan places neither end: the client end the first
/// half, the server end the rest, as two hosts would each have CPUs of their own. `None` when
/// the plan places them, or on a single CPU.
pub fn apart(plan: &TestPlan, side: Side, cpus: &[u32]) -> Option<Vec<u32>> {
    if placed(plan)
        || cpus.len() < 2
        || Kind::of(plan.kind.id()).ok()?.loopback() != Loopback::EndsApart
    {
        return None;
    }
    let (client, server) = cpus.split_at(cpus.len() / 2);
    Some(match side {
        Side::Client => client.to_vec(),
        Side::Server => server.to_vec(),
    })
}

/// The note both ends of a loopback request/response test give for [`apart`] (alike, so the
/// report says it once).
fn apart_note(cpus: &[u32]) -> String {
    let (client, server) = cpus.split_at(cpus.len() / 2);
    format!(
        "loopback path: the client end's workers on CPU {}, the server end's on CPU {}, each end \
         on CPUs of its own as between two hosts (--affinity {}/{} puts both ends on one CPU, \
         which answers without waking another CPU, a rate no network path gives; --affinity, \
         --cpus or --threads overrides)",
        list(client),
        list(server),
        client[0],
        client[0]
    )
}

/// `cpus` as a list: `0,1`.
fn list(cpus: &[u32]) -> String {
    cpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether this end's data sockets get [`LOOPBACK_SNDBUF`] on a loopback path when the plan
/// sets no send buffer: a stream's, and a profile's TCP connections (not a UDP group's, whose
/// datagram sockets keep the host's default).
fn small_send_buffers(loopback: Loopback, plan: &TestPlan) -> bool {
    plan.socket.sndbuf.is_none()
        && match &plan.kind {
            KindPlan::Profile(p) => !crate::kinds::moves_datagrams(p),
            _ => loopback == Loopback::ReceiverOnSenderCpu,
        }
}

/// A stream's read size on a real path when the plan sets none: [`REAL_PATH_READ`], or this
/// host's default if larger.
fn real_path_read(loopback: Loopback, plan: &TestPlan) -> Option<u32> {
    (loopback == Loopback::ReceiverOnSenderCpu && plan.read_size == 0)
        .then(|| REAL_PATH_READ.max(crate::measure::host::default_read_size()))
}

/// A clear stream's workers on a real path with `flows` flows on this end and `cpus` CPUs: one
/// per flow when that is more than one per CPU, up to [`PER_FLOW_WORKERS`] flows (a plan's
/// `--threads` still wins); `None` when the usual count stands.
fn per_flow_workers(loopback: Loopback, flows: usize, cpus: u32) -> Option<usize> {
    (loopback == Loopback::ReceiverOnSenderCpu
        && flows > cpus as usize
        && flows <= PER_FLOW_WORKERS)
        .then_some(flows)
}

/// True when a connected socket's peer is on this host: a loopback address, or the socket's
/// own address (a connection to one of this host's addresses goes over loopback too).
pub fn is_loopback(sock: &Socket) -> bool {
    let ip = |a: io::Result<socket2::SockAddr>| a.ok().and_then(|a| a.as_socket()).map(|a| a.ip());
    match (ip(sock.local_addr()), ip(sock.peer_addr())) {
        (Some(l), Some(p)) => p.is_loopback() || l == p,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
