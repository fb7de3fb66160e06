//! An endpoint: one side of one test. It turns connected sockets into flows, spreads them over
//! worker threads, and runs a sampler thread that snapshots every counter at the schedule's
//! boundaries and hands the snapshots to a sink (the control connection, or the controller's
//! own collector).

use crate::clock;
use crate::kind::{Flow, Kind, Setup, Side, Sockets};
use crate::measure::{counters::FlowStats, host, sock_diag::TcpInfos};
use crate::path::PathDefaults;
use crate::schedule::Schedule;
use crate::sockopt;
use crate::tls::TlsEnd;
use crate::worker::{self, WorkerPlan, WorkerShared};
use fathom_proto::plan::TestPlan;
use fathom_proto::sample::{EndpointInfo, FlowInfo, Snapshot};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The first snapshot is taken this long before t0 and stamped t0 (early enough that dozens of
/// hosts' samplers on a few CPUs are all done before their workers start; the window's CPU
/// figures then include these few idle milliseconds, well under 0.1% of a 10 s window).
mod sampler;

use sampler::Sampler;

const FIRST_SNAPSHOT_LEAD_NS: u64 = 5_000_000;

/// An endpoint whose flows are built but not started.
pub struct Prepared {
    plan: Arc<TestPlan>,
    side: Side,
    ids: Vec<u32>,
    infos: Vec<FlowInfo>,
    stats: Vec<Arc<FlowStats>>,
    tcp: TcpInfos,
    groups: Vec<Vec<Box<dyn Flow>>>,
    /// Defaults chosen for the path, with why.
    path: PathDefaults,
    tls: Option<(TlsEnd, Vec<u64>)>,
}

impl Prepared {
    /// Builds the flows `ids` of `side` from its data sockets; a TLS test (`tls`, this end's
    /// configuration) shakes hands on each connected one first unless it came with its session, and an agent's file flows stay
    /// below `files_root`. Snapshots and infos list the flows in the order of `ids`.
    pub fn new(
        plan: Arc<TestPlan>,
        end: (Side, Option<&std::path::Path>),
        ids: Vec<u32>,
        sockets: Sockets,
        tls: Option<TlsEnd>,
    ) -> io::Result<Self> {
        Self::build(plan, end, ids, sockets, tls, None)
    }

    /// As [`Prepared::new`], for a profile test whose barriers are met together with other
    /// tests of this process (a profile's groups), as `barriers` keeps them.
    pub fn sharing(
        plan: Arc<TestPlan>,
        end: (Side, Option<&std::path::Path>),
        ids: Vec<u32>,
        sockets: Sockets,
        tls: Option<TlsEnd>,
        barriers: &Arc<crate::ProfileBarriers>,
    ) -> io::Result<Self> {
        Self::build(plan, end, ids, sockets, tls, Some(barriers))
    }

    fn build(
        plan: Arc<TestPlan>,
        (side, files_root): (Side, Option<&std::path::Path>),
        ids: Vec<u32>,
        sockets: Sockets,
        tls: Option<TlsEnd>,
        barriers: Option<&Arc<crate::ProfileBarriers>>,
    ) -> io::Result<Self> {
        let k = Kind::of(plan.kind.id())?;
        let path = crate::path::choose(&plan, side, &sockets)?;
        let connected = |(f, sock): (&fathom_proto::plan::FlowPlan, &socket2::Socket)| {
            sockopt::apply_connected(std::os::fd::AsRawFd::as_raw_fd(sock), &plan.socket)?;
            Ok(sockopt::flow_info(f.id, sock))
        };
        let infos = match &sockets {
            Sockets::Tcp(v) | Sockets::Udp(v) => v
                .iter()
                .map(|(f, s)| connected((f, s)))
                .collect::<io::Result<Vec<_>>>()?,
            Sockets::Tls(v) => v
                .iter()
                .map(|(f, s, _, _)| connected((f, s)))
                .collect::<io::Result<Vec<_>>>()?,
            Sockets::Connect(..) | Sockets::Listen(..) => ids
                .iter()
                .map(|&id| FlowInfo {
                    id,
                    ..Default::default()
                })
                .collect(),
        };
        let sockets = match (&tls, sockets) {
            (Some(end), Sockets::Tcp(v)) => crate::tls::shake_hands(end, v)?,
            (_, other) => other,
        };
        let handshakes = match &sockets {
            Sockets::Tls(v) => v.iter().map(|(.., ns)| *ns).collect(),
            _ => Vec::new(),
        };
        let stats: Vec<Arc<FlowStats>> =
            ids.iter().map(|_| Arc::new(FlowStats::default())).collect();
        let flows = k.flows(
            &Setup {
                plan: &plan,
                side,
                ids: &ids,
                stats: &stats,
                files_root,
                tls: tls.as_ref(),
                barriers,
                sndbuf: path.sndbuf,
                worker_per_flow: path.worker_per_flow,
            },
            sockets,
        )?;
        // Chosen here, before the start is agreed, since choosing reads every socket twice.
        let fds: Vec<i32> = stats.iter().map(|s| s.fd()).collect();
        let tcp = TcpInfos::new(&fds);
        let threads = worker_count(&plan, side, flows.len(), path.workers);
        let mut groups: Vec<Vec<Box<dyn Flow>>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, f) in flows.into_iter().enumerate() {
            groups[i % threads].push(f);
        }
        Ok(Prepared {
            plan,
            side,
            ids,
            infos,
            stats,
            tcp,
            groups,
            path,
            tls: tls.map(|end| (end, handshakes)),
        })
    }

    /// Socket facts of every flow, as set up.
    pub fn flow_infos(&self) -> &[FlowInfo] {
        &self.infos
    }

    /// Starts workers and sampler; they begin at `t0` (monotonic ns). Every snapshot is handed
    /// to `sink` on the sampler thread as soon as it is taken.
    pub fn start(self, t0: u64, sink: Box<dyn FnMut(Snapshot) + Send>) -> io::Result<Running> {
        let abort = Arc::new(AtomicBool::new(false));
        let (signal_tx, signal_rx) = mpsc::channel();
        let schedule = Schedule::of(&self.plan);
        let end_ns = Arc::new(AtomicU64::new(
            schedule.end().map_or(u64::MAX, |e| t0.saturating_add(e)),
        ));
        let side_opts = match self.side {
            Side::Client => &self.plan.client,
            Side::Server => &self.plan.server,
        };
        let read = read_size(&self.plan, &self.path);
        let mut workers = Vec::new();
        let gate = Arc::new(crate::gate::Gate::default());
        for (i, flows) in self.groups.into_iter().enumerate() {
            let shared = Arc::new(WorkerShared {
                abort: abort.clone(),
                end_ns: end_ns.clone(),
                ..Default::default()
            });
            let wp = WorkerPlan {
                flows,
                pin: side_opts
                    .affinity
                    .as_ref()
                    .or(self.path.pins.as_ref())
                    .filter(|c| !c.is_empty())
                    .map(|c| c[i % c.len()]),
                cpu_set: side_opts.cpu_set.clone(),
                t0,
                start: gate.clone(),
                busy_poll: self.plan.socket.busy_poll,
                write_size: self.plan.write_size as usize,
                read_size: read as usize,
                zerocopy: self.plan.zerocopy,
            };
            let (sh, tx) = (shared.clone(), signal_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("fathom-w{i}"))
                .spawn(move || {
                    let r = worker::run(wp, &sh);
                    let _ = tx.send(Signal::WorkerDone);
                    r
                })?;
            workers.push((Some(handle), shared));
        }
        let sampler = Sampler {
            tcp: self.tcp,
            side: self.side,
            ids: self.ids,
            t0,
            start: gate,
            schedule,
            plan: self.plan,
            infos: self.infos,
            defaults: self.path.notes,
            chosen_sndbuf: self.path.sndbuf,
            read_size: read,
            stats: self.stats,
            workers,
            signals: signal_rx,
            sink,
            tls: self.tls,
            proc_stat: Default::default(),
        };
        let handle = std::thread::Builder::new()
            .name("fathom-sampler".into())
            .spawn(move || sampler.run())?;
        Ok(Running {
            control: Aborter {
                abort,
                end_ns,
                poke: signal_tx,
            },
            sampler: handle,
        })
    }
}

/// A started endpoint.
pub struct Running {
    control: Aborter,
    sampler: JoinHandle<EndpointInfo>,
}

impl Running {
    /// A handle that can stop the endpoint from another thread.
    pub fn aborter(&self) -> Aborter {
        self.control.clone()
    }

    /// Waits for the end; the final snapshot has been sunk when this returns.
    pub fn join(self) -> EndpointInfo {
        self.sampler.join().unwrap_or_else(|_| EndpointInfo {
            error: Some("the sampler thread panicked".into()),
            ..Default::default()
        })
    }
}

/// Stops a running endpoint from anywhere.
#[derive(Clone)]
pub struct Aborter {
    abort: Arc<AtomicBool>,
    end_ns: Arc<AtomicU64>,
    poke: mpsc::Sender<Signal>,
}

impl Aborter {
    /// Ends the test now, without draining (workers notice within 100 ms).
    pub fn abort(&self) {
        self.abort.store(true, Ordering::Relaxed);
        let _ = self.poke.send(Signal::Abort);
    }

    /// Ends the test gracefully now, as its time limit would: senders and askers stop,
    /// receivers drain. Used when the other end has finished a counted test.
    pub fn finish(&self) {
        self.end_ns.fetch_min(clock::now_ns(), Ordering::Relaxed);
    }
}

enum Signal {
    WorkerDone,
    Abort,
}

/// The plan's read size, or, when the plan leaves it to each end (0), the one chosen for the
/// `path`, else this host's default.
fn read_size(plan: &TestPlan, path: &PathDefaults) -> u32 {
    match plan.read_size {
        0 => path.read.unwrap_or_else(host::default_read_size),
        n => n,
    }
}

/// The plan's threads for this side, else what the path chose (`chosen`), else one per CPU; at
/// most one per flow.
pub(crate) fn worker_count(
    plan: &TestPlan,
    side: Side,
    flows: usize,
    chosen: Option<usize>,
) -> usize {
    let opts = match side {
        Side::Client => &plan.client,
        Side::Server => &plan.server,
    };
    let want = opts
        .threads
        .map(|t| t as usize)
        .or(chosen)
        .unwrap_or_else(|| host::online_cpus() as usize);
    want.clamp(1, flows.max(1))
}

/// SO_SNDBUF and SO_RCVBUF of the socket `fd` as the kernel reports them now (0 on error):
/// one SO_MEMINFO call, which copies the same two fields, else one call for each.
pub(crate) fn fd_buffers(fd: i32) -> (u32, u32) {
    meminfo_buffers(fd).unwrap_or_else(|| {
        (
            sockopt_int(fd, libc::SO_SNDBUF),
            sockopt_int(fd, libc::SO_RCVBUF),
        )
    })
}

/// `SO_MEMINFO` (Linux 4.12) where its number is asm-generic's; the libc crate lacks it.
#[cfg(any(
    target_arch = "x86",
    target_arch = "x86_64",
    target_arch = "arm",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
const SO_MEMINFO: Option<i32> = Some(55);
#[cfg(not(any(
    target_arch = "x86",
    target_arch = "x86_64",
    target_arch = "arm",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const SO_MEMINFO: Option<i32> = None;

/// (sk_sndbuf, sk_rcvbuf) from the socket's memory figures, if the kernel gives them.
fn meminfo_buffers(fd: i32) -> Option<(u32, u32)> {
    let ([_, rcv, _, snd], len) = sockopt::get::<[u32; 4]>(fd, libc::SOL_SOCKET, SO_MEMINFO?)?;
    (len == 4 * std::mem::size_of::<u32>()).then_some((snd, rcv))
}

/// An int socket option at SOL_SOCKET (0 on error).
fn sockopt_int(fd: i32, name: i32) -> u32 {
    sockopt::get::<i32>(fd, libc::SOL_SOCKET, name).map_or(0, |(v, _)| v.max(0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn buffers_read_in_one_call_match_the_two_options() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c =
            socket2::Socket::from(std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap());
        c.set_send_buffer_size(96 << 10).unwrap();
        c.set_recv_buffer_size(40 << 10).unwrap();
        let fd = c.as_raw_fd();
        let two = (
            sockopt_int(fd, libc::SO_SNDBUF),
            sockopt_int(fd, libc::SO_RCVBUF),
        );
        assert!(two.0 > 0 && two.1 > 0 && two.0 != two.1, "{two:?}");
        if SO_MEMINFO.is_some() {
            assert_eq!(meminfo_buffers(fd), Some(two));
        }
        assert_eq!(fd_buffers(fd), two);
        assert_eq!(fd_buffers(-1), (0, 0));
    }
}
