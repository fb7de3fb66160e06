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
//! A TCP request/response test gets the same placement: each flow's two ends then share a CPU,
//! which answers a transaction without waking another CPU (bench/RESULTS.md, "rr placement on
//! loopback"), and so does a profile, whose connections open during the test: its connecting
//! end's address, or its listener's, says whether the path is loopback. A profile's TCP
//! connections get a stream's send buffers too unless the group sets a `window`: the
//! connecting end's through [`PathDefaults::sndbuf`], which reaches the kind's dialer, the
//! accepting end's from its listener, whose buffer sizes its connections inherit. Each end
//! decides alone, from the plan and its own sockets, and both decide alike.

use crate::clock;
use crate::kind::{Kind, Loopback, Sockets};
use fathom_proto::plan::{KindPlan, TestPlan};
use socket2::Socket;
use std::io;

/// The send buffer a stream's sockets get on a loopback path when the plan sets none: the
/// receiver then copies data the sender wrote a moment before, still in cache.
pub const LOOPBACK_SNDBUF: u32 = 64 << 10;

/// The smallest read a stream receiver makes on a real path when the plan sets no read size.
/// There the data arrives by the network's receive path, not from a sender on the same CPU a
/// moment before, so a read buffer that stays in L1 (the loopback default) saves nothing, and
/// larger reads make fewer calls per GB: the receiver's CPU per GB on a veth pair fell from
/// 0.220 to 0.176 s with one stream, and from 0.260 to 0.224 with four (bench/RESULTS.md,
/// "Real paths, fourth session"). nuttcp reads 64 KB, iperf3 128 KB.
pub const REAL_PATH_READ: u32 = 64 << 10;

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
    /// Worker threads for a clear stream's few flows on a real path, one per flow, when that is
    /// more than one per CPU; each flow's receiver then waits in its reads.
    pub workers: Option<usize>,
    /// What was chosen and why, one line each.
    pub notes: Vec<String>,
}

/// Chooses (and applies to `sockets`) this end's defaults for its path.
pub fn choose(plan: &TestPlan, sockets: &Sockets) -> io::Result<PathDefaults> {
    let mut d = PathDefaults::default();
    let v: Vec<&Socket> = match sockets {
        Sockets::Tcp(v) => v.iter().map(|(_, s)| s).collect(),
        Sockets::Tls(v) => v.iter().map(|(_, s, ..)| s).collect(),
        _ => Vec::new(),
    };
    let on_loopback = match sockets {
        Sockets::Tcp(_) | Sockets::Tls(_) => !v.is_empty() && v.iter().all(|s| is_loopback(s)),
        // Connections opened during the test (a profile's): where they go, or where they come.
        Sockets::Connect(to, _) => to.ip().is_loopback(),
        Sockets::Listen(l, _) => l
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .is_some_and(|a| a.ip().is_loopback()),
        Sockets::Udp(_) => false,
    };
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
    let placed = |o: &fathom_proto::plan::SideOptions| {
        o.affinity.is_some() || o.cpu_set.is_some() || o.threads.is_some()
    };
    let cpus = clock::usable_cpus();
    if !placed(&plan.client) && !placed(&plan.server) && cpus.len() > 1 {
        let why = if loopback == Loopback::ReceiverOnSenderCpu {
            "each flow's receiver runs on its sender's CPU"
        } else {
            "each flow's two ends share a CPU and answer without waking another"
        };
        d.notes.push(format!(
            "loopback path: worker i of each end on CPU i ({}), so {why} (--affinity, --cpus \
             or --threads overrides)",
            cpus.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ));
        d.pins = Some(cpus);
    }
    Ok(d)
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
mod tests {
    use super::*;
    use fathom_proto::plan::{Direction, FlowPlan, KindPlan, RrOptions};
    use std::net::{TcpListener, TcpStream};

    /// One loopback connection's accepted end, as the engine gets it.
    fn loopback() -> (TcpStream, Sockets) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let ours = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let flow = FlowPlan {
            id: 0,
            dir: Direction::Forward,
        };
        (
            ours,
            Sockets::Tcp(vec![(flow, l.accept().unwrap().0.into())]),
        )
    }

    /// What [`choose`] decides for `plan` on a loopback connection.
    fn on_loopback(plan: &TestPlan) -> PathDefaults {
        let (_peer, socks) = loopback();
        choose(plan, &socks).unwrap()
    }

    fn sndbuf(s: &Sockets) -> usize {
        let Sockets::Tcp(v) = s else { unreachable!() };
        v[0].1.send_buffer_size().unwrap()
    }

    #[test]
    fn a_loopback_stream_gets_small_send_buffers_and_paired_workers() {
        let (_peer, socks) = loopback();
        let plan = TestPlan::default();
        let d = choose(&plan, &socks).unwrap();
        assert_eq!(d.sndbuf, Some(LOOPBACK_SNDBUF));
        assert_eq!(
            sndbuf(&socks),
            2 * LOOPBACK_SNDBUF as usize,
            "Linux doubles the request"
        );
        assert!(
            d.notes[0].starts_with("loopback path: send buffers 64K"),
            "{:?}",
            d.notes
        );
        let cpus = clock::usable_cpus();
        assert_eq!(d.pins.is_some(), cpus.len() > 1);
        assert_eq!(d.notes.len(), 1 + usize::from(cpus.len() > 1));
    }

    #[test]
    fn what_the_plan_sets_is_left_alone() {
        let mut plan = TestPlan::default();
        plan.socket.sndbuf = Some(256 << 10);
        plan.server.threads = Some(1);
        let d = on_loopback(&plan);
        assert_eq!((d.sndbuf, d.pins, d.notes.len()), (None, None, 0));
    }

    #[test]
    fn a_loopback_request_response_gets_paired_workers_and_autotuned_buffers() {
        let d = on_loopback(&TestPlan {
            kind: KindPlan::Rr(RrOptions::default()),
            ..TestPlan::default()
        });
        assert_eq!(d.sndbuf, None);
        let cpus = clock::usable_cpus();
        assert_eq!(d.pins.is_some(), cpus.len() > 1);
        if cpus.len() > 1 {
            assert!(d.notes[0].contains("two ends share a CPU"), "{:?}", d.notes);
        }
    }

    #[test]
    fn a_real_paths_stream_reads_at_least_64k_unless_the_plan_says() {
        let mut plan = TestPlan::default();
        let read = real_path_read(Loopback::ReceiverOnSenderCpu, &plan).unwrap();
        assert!(read >= REAL_PATH_READ, "{read}");
        assert_eq!(real_path_read(Loopback::EndsShareCpu, &plan), None);
        plan.read_size = 16 << 10;
        assert_eq!(real_path_read(Loopback::ReceiverOnSenderCpu, &plan), None);
    }

    #[test]
    fn a_real_paths_few_streams_get_a_worker_each() {
        let w = |l, n| per_flow_workers(l, n, 2);
        assert_eq!(w(Loopback::ReceiverOnSenderCpu, 4), Some(4));
        assert_eq!(w(Loopback::ReceiverOnSenderCpu, PER_FLOW_WORKERS + 1), None);
        assert_eq!(
            w(Loopback::ReceiverOnSenderCpu, 2),
            None,
            "a CPU each already"
        );
        assert_eq!(w(Loopback::ReceiverOnSenderCpu, 1), None);
        assert_eq!(w(Loopback::EndsShareCpu, 4), None);
        let d = on_loopback(&TestPlan::default());
        assert_eq!(d.workers, None, "loopback keeps a worker per CPU");
    }

    /// A profile plan whose one transaction runs `op`.
    fn profile(op: fathom_proto::profile::Op) -> TestPlan {
        use fathom_proto::profile::{FlowOp, Program, Repeat, Transaction};
        let ops = vec![FlowOp {
            op,
            count: 1,
            can_fail: false,
        }];
        TestPlan {
            kind: KindPlan::Profile(Program {
                transactions: vec![Transaction {
                    repeat: Repeat::Iterations(1),
                    rate: None,
                    barrier: false,
                    ops,
                }],
                seed: 1,
            }),
            ..TestPlan::default()
        }
    }

    /// The send buffer of a connection accepted on `listener`.
    fn accepted_sndbuf(listener: &socket2::Socket) -> usize {
        let to = listener.local_addr().unwrap().as_socket().unwrap();
        let _ours = TcpStream::connect(to).unwrap();
        listener.accept().unwrap().0.send_buffer_size().unwrap()
    }

    #[test]
    fn a_loopback_profile_gets_paired_workers_and_small_send_buffers_at_both_ends() {
        use fathom_proto::profile::{Op, Size};
        let plan = profile(Op::Write(Size::Fixed(1 << 20)));
        let listener = socket2::Socket::from(TcpListener::bind("127.0.0.1:0").unwrap());
        let to = listener.local_addr().unwrap().as_socket().unwrap();
        let multi = clock::usable_cpus().len() > 1;
        let d = choose(&plan, &Sockets::Connect(to, [0; 16])).unwrap();
        assert_eq!((d.sndbuf, d.pins.is_some()), (Some(LOOPBACK_SNDBUF), multi));
        assert!(
            d.notes[0].contains("(a group's window overrides)"),
            "{:?}",
            d.notes
        );
        let socks = Sockets::Listen(listener, [0; 16]);
        let d = choose(&plan, &socks).unwrap();
        assert_eq!((d.sndbuf, d.pins.is_some()), (Some(LOOPBACK_SNDBUF), multi));
        let Sockets::Listen(listener, _) = &socks else {
            unreachable!()
        };
        assert_eq!(
            accepted_sndbuf(listener),
            2 * LOOPBACK_SNDBUF as usize,
            "a connection takes its listener's buffer, doubled"
        );
        let away = Sockets::Connect("192.0.2.1:5301".parse().unwrap(), [0; 16]);
        let d = choose(&plan, &away).unwrap();
        assert_eq!((d.sndbuf, d.pins), (None, None));
    }

    #[test]
    fn a_profile_groups_window_wins_and_a_udp_group_keeps_its_buffers() {
        use fathom_proto::profile::{Op, Size};
        let mut plan = profile(Op::Write(Size::Fixed(1 << 20)));
        plan.socket.sndbuf = Some(256 << 10);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let l = socket2::Socket::from(listener);
        l.set_send_buffer_size(256 << 10).unwrap();
        let to = l.local_addr().unwrap().as_socket().unwrap();
        let d = choose(&plan, &Sockets::Connect(to, [0; 16])).unwrap();
        assert_eq!(d.sndbuf, None);
        let socks = Sockets::Listen(l, [0; 16]);
        assert_eq!(choose(&plan, &socks).unwrap().sndbuf, None);
        let Sockets::Listen(l, _) = &socks else {
            unreachable!()
        };
        assert_eq!(accepted_sndbuf(l), 2 * (256 << 10), "the window stays");
        let udp = profile(Op::SendTo(Size::Fixed(64)));
        let d = choose(&udp, &Sockets::Connect(to, [0; 16])).unwrap();
        assert_eq!(d.sndbuf, None);
        assert!(
            d.notes.iter().all(|n| !n.contains("send buffers")),
            "{:?}",
            d.notes
        );
    }

    #[test]
    fn other_kinds_get_nothing() {
        let d = on_loopback(&TestPlan {
            kind: KindPlan::Crr(RrOptions::default()),
            ..TestPlan::default()
        });
        assert_eq!((d.sndbuf, d.pins, d.notes.len()), (None, None, 0));
    }
}
