//! An endpoint: one side of one test. It turns connected sockets into flows, spreads them over
//! worker threads, and runs a sampler thread that snapshots every counter at the schedule's
//! boundaries and hands the snapshots to a sink (the control connection, or the controller's
//! own collector).

use crate::clock;
use crate::kind::{kind, Flow, FlowSetup, Side};
use crate::measure::{counters::FlowStats, cpu, host, tcp_info};
use crate::schedule::Schedule;
use crate::sockopt;
use crate::worker::{self, WorkerPlan, WorkerResult, WorkerShared};
use fathom_proto::plan::{FlowPlan, TestPlan};
use fathom_proto::sample::{CpuSnapshot, EndpointInfo, FlowInfo, Mark, Snapshot};
use socket2::Socket;
use std::io;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The first snapshot is taken this long before t0 and stamped t0.
const FIRST_SNAPSHOT_LEAD_NS: u64 = 200_000;

/// How long receivers may drain after a timed test's end before everything stops.
pub const DRAIN_NS: u64 = 1_000_000_000;

/// An endpoint whose flows are built but not started.
pub struct Prepared {
    plan: Arc<TestPlan>,
    side: Side,
    infos: Vec<FlowInfo>,
    stats: Vec<Arc<FlowStats>>,
    groups: Vec<Vec<Box<dyn Flow>>>,
}

impl Prepared {
    /// Builds the flows of `side` from its connected data sockets.
    pub fn new(plan: Arc<TestPlan>, side: Side, sockets: Vec<(FlowPlan, Socket)>) -> io::Result<Self> {
        let k = kind(plan.kind).ok_or_else(|| {
            io::Error::new(io::ErrorKind::Unsupported, format!("test kind {} is not built in", plan.kind.name()))
        })?;
        let threads = worker_count(&plan, side, sockets.len());
        let mut groups: Vec<Vec<Box<dyn Flow>>> = (0..threads).map(|_| Vec::new()).collect();
        let (mut infos, mut stats) = (Vec::new(), Vec::new());
        for (i, (flow, sock)) in sockets.into_iter().enumerate() {
            sockopt::apply_connected(std::os::fd::AsRawFd::as_raw_fd(&sock), &plan.socket)?;
            infos.push(sockopt::flow_info(flow.id, &sock));
            sock.set_nonblocking(true)?;
            let st = Arc::new(FlowStats::default());
            stats.push(st.clone());
            let index_in_dir = plan.flows_in(flow.dir).position(|f| f.id == flow.id).unwrap_or(0) as u64;
            let setup = FlowSetup {
                flows_in_dir: plan.flows_in(flow.dir).count() as u64,
                index_in_dir,
                plan: plan.clone(),
                flow,
                side,
                socket: mio::net::TcpStream::from_std(sock.into()),
                stats: st,
            };
            groups[i % threads].push(k.flow(setup)?);
        }
        Ok(Prepared { plan, side, infos, stats, groups })
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
        let (end_ns, hard_end_ns) = match schedule.end() {
            Some(e) => (t0 + e, t0 + e + DRAIN_NS),
            None => (u64::MAX, u64::MAX),
        };
        let side_opts = match self.side {
            Side::Controller => &self.plan.controller,
            Side::Agent => &self.plan.agent,
        };
        let mut workers = Vec::new();
        let barrier = Arc::new(std::sync::Barrier::new(self.groups.len() + 1));
        for (i, flows) in self.groups.into_iter().enumerate() {
            let shared = Arc::new(WorkerShared { abort: abort.clone(), ..Default::default() });
            let wp = WorkerPlan {
                flows,
                pin: side_opts.affinity.as_ref().filter(|c| !c.is_empty()).map(|c| c[i % c.len()]),
                t0,
                start: barrier.clone(),
                end_ns,
                hard_end_ns,
                busy_poll: self.plan.socket.busy_poll,
                write_size: self.plan.write_size as usize,
                read_size: self.plan.read_size as usize,
                zerocopy: self.plan.zerocopy,
            };
            let (sh, tx) = (shared.clone(), signal_tx.clone());
            let handle = std::thread::Builder::new().name(format!("fathom-w{i}")).spawn(move || {
                let r = worker::run(wp, &sh);
                let _ = tx.send(Signal::WorkerDone);
                r
            })?;
            workers.push((handle, shared));
        }
        let sampler = Sampler {
            t0,
            start: barrier,
            schedule,
            plan: self.plan,
            infos: self.infos,
            stats: self.stats,
            workers,
            signals: signal_rx,
            sink,
        };
        let handle = std::thread::Builder::new().name("fathom-sampler".into()).spawn(move || sampler.run())?;
        Ok(Running { abort, poke: signal_tx, sampler: handle })
    }
}

/// A started endpoint.
pub struct Running {
    abort: Arc<AtomicBool>,
    poke: mpsc::Sender<Signal>,
    sampler: JoinHandle<EndpointInfo>,
}

impl Running {
    /// Ends the test now (workers notice within 100 ms).
    pub fn abort(&self) {
        self.abort.store(true, Ordering::Relaxed);
        let _ = self.poke.send(Signal::Abort);
    }

    /// A handle that can abort from another thread.
    pub fn aborter(&self) -> Aborter {
        Aborter { abort: self.abort.clone(), poke: self.poke.clone() }
    }

    /// Waits for the end; the final snapshot has been sunk when this returns.
    pub fn join(self) -> EndpointInfo {
        self.sampler.join().unwrap_or_else(|_| EndpointInfo {
            error: Some("the sampler thread panicked".into()),
            ..Default::default()
        })
    }
}

/// Aborts a running endpoint from anywhere.
#[derive(Clone)]
pub struct Aborter {
    abort: Arc<AtomicBool>,
    poke: mpsc::Sender<Signal>,
}

impl Aborter {
    /// See [`Running::abort`].
    pub fn abort(&self) {
        self.abort.store(true, Ordering::Relaxed);
        let _ = self.poke.send(Signal::Abort);
    }
}

enum Signal {
    WorkerDone,
    Abort,
}

struct Sampler {
    t0: u64,
    start: Arc<std::sync::Barrier>,
    schedule: Schedule,
    plan: Arc<TestPlan>,
    infos: Vec<FlowInfo>,
    stats: Vec<Arc<FlowStats>>,
    workers: Vec<(JoinHandle<WorkerResult>, Arc<WorkerShared>)>,
    signals: mpsc::Receiver<Signal>,
    sink: Box<dyn FnMut(Snapshot) + Send>,
}

impl Sampler {
    fn run(mut self) -> EndpointInfo {
        let mut done = 0;
        let mut aborted = false;
        // Workers wait at the barrier until this first snapshot is taken, so it holds exactly
        // the state at the start, even when this thread wakes late.
        clock::sleep_until(self.t0.saturating_sub(FIRST_SNAPSHOT_LEAD_NS));
        let (mut t, mark) = self.schedule.first();
        self.emit(mark, Some(self.t0.max(clock::now_ns())));
        self.start.wait();
        while let Some((next, mark)) = self.schedule.next_after(t) {
            t = next;
            match self.wait_until(self.t0 + next, &mut done) {
                Wait::Reached => self.emit(mark, None),
                Wait::AllDone => break,
                Wait::Aborted => {
                    aborted = true;
                    break;
                }
            }
        }
        while !aborted && done < self.workers.len() {
            match self.signals.recv() {
                Ok(Signal::WorkerDone) => done += 1,
                Ok(Signal::Abort) | Err(_) => aborted = true,
            }
        }
        let results: Vec<WorkerResult> = std::mem::take(&mut self.workers)
            .into_iter()
            .map(|(h, _)| h.join().unwrap_or_else(|_| panicked_worker()))
            .collect();
        if self.schedule.end().is_none() && !aborted {
            let last = self.stats.iter().filter_map(|s| s.last_ns()).max().unwrap_or_else(clock::now_ns);
            self.emit(Mark::WindowEnd, Some(last));
        }
        self.emit(Mark::Final, None);
        self.finish(results)
    }

    fn wait_until(&self, deadline: u64, done: &mut usize) -> Wait {
        loop {
            let now = clock::now_ns();
            if now >= deadline {
                return Wait::Reached;
            }
            match self.signals.recv_timeout(Duration::from_nanos(deadline - now)) {
                Ok(Signal::WorkerDone) => {
                    *done += 1;
                    if *done == self.workers.len() {
                        return Wait::AllDone;
                    }
                }
                Ok(Signal::Abort) => return Wait::Aborted,
                Err(mpsc::RecvTimeoutError::Timeout) => return Wait::Reached,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Wait::Aborted,
            }
        }
    }

    /// Takes a snapshot stamped `at` (monotonic ns) when the caller vouches that the counters
    /// read now are those of that instant, else stamped after the counters are read, so that an
    /// interval never holds bytes that arrived after its end.
    fn emit(&mut self, mark: Mark, at: Option<u64>) {
        let mut flows: Vec<_> = self.stats.iter().map(|s| s.snapshot()).collect();
        let at = at.unwrap_or_else(clock::now_ns);
        for (f, s) in flows.iter_mut().zip(&self.stats) {
            if s.fd() >= 0 {
                f.tcp = tcp_info::read(s.fd());
            }
        }
        let (process_user_us, process_system_us) = cpu::process_rusage_us();
        let cpu = CpuSnapshot { per_cpu: cpu::proc_stat(), threads_ns: self.threads_cpu_ns(), process_user_us, process_system_us };
        let snap = Snapshot { mark, t_ns: at as i64 - self.t0 as i64, flows, cpu, latency: None };
        (self.sink)(snap);
    }

    fn threads_cpu_ns(&self) -> u64 {
        let workers: u64 = self
            .workers
            .iter()
            .map(|(h, sh)| {
                clock::other_thread_cpu_ns(h.as_pthread_t())
                    .unwrap_or_else(|| sh.final_cpu_ns.load(Ordering::Acquire))
            })
            .sum();
        workers + clock::thread_cpu_ns()
    }

    fn finish(mut self, results: Vec<WorkerResult>) -> EndpointInfo {
        let rel = |ns: Option<u64>| ns.map(|v| v as i64 - self.t0 as i64);
        for (info, st) in self.infos.iter_mut().zip(&self.stats) {
            if st.fd() >= 0 {
                let (s, r) = fd_buffers(st.fd());
                info.sndbuf_end = s;
                info.rcvbuf_end = r;
            }
            info.first_byte_ns = rel(st.first_ns());
            info.last_byte_ns = rel(st.last_ns());
        }
        let error = results.iter().find_map(|r| r.error.clone());
        EndpointInfo {
            host: host::host_info(),
            flows: self.infos,
            threads: results.into_iter().map(|r| r.info).collect(),
            wait: if self.plan.socket.busy_poll { "busy-poll" } else { "epoll" }.into(),
            limits: host::buffer_limits(),
            error,
        }
    }
}

enum Wait {
    Reached,
    AllDone,
    Aborted,
}

fn panicked_worker() -> WorkerResult {
    WorkerResult { _flows: Vec::new(), info: Default::default(), error: Some("a worker thread panicked".into()) }
}

fn worker_count(plan: &TestPlan, side: Side, flows: usize) -> usize {
    let opts = match side {
        Side::Controller => &plan.controller,
        Side::Agent => &plan.agent,
    };
    let want = opts.threads.map(|t| t as usize).unwrap_or_else(|| host::online_cpus() as usize);
    want.clamp(1, flows.max(1))
}

fn fd_buffers(fd: i32) -> (u32, u32) {
    let get = |name| {
        let mut v: i32 = 0;
        let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
        // SAFETY: valid int pointer and length.
        unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, name, (&mut v as *mut i32).cast(), &mut len) };
        v.max(0) as u32
    };
    (get(libc::SO_SNDBUF), get(libc::SO_RCVBUF))
}
