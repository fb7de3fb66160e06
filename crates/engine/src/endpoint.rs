//! An endpoint: one side of one test. It turns connected sockets into flows, spreads them over
//! worker threads, and runs a sampler thread that snapshots every counter at the schedule's
//! boundaries and hands the snapshots to a sink (the control connection, or the controller's
//! own collector).

use crate::clock;
use crate::kind::{Flow, Kind, Setup, Side, Sockets};
use crate::measure::{counters::FlowStats, cpu, host, latency, sock_diag::TcpInfos, udp_snmp};
use crate::path::PathDefaults;
use crate::schedule::Schedule;
use crate::sockopt;
use crate::tls::TlsEnd;
use crate::worker::{self, WorkerPlan, WorkerResult, WorkerShared};
use fathom_proto::plan::TestPlan;
use fathom_proto::sample::{CpuSnapshot, EndpointInfo, FlowInfo, Mark, Snapshot};
use std::io;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The first snapshot is taken this long before t0 and stamped t0 (early enough that dozens of
/// hosts' samplers on a few CPUs are all done before their workers start; the window's CPU
/// figures then include these few idle milliseconds, well under 0.1% of a 10 s window).
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
        (side, files_root): (Side, Option<&std::path::Path>),
        ids: Vec<u32>,
        sockets: Sockets,
        tls: Option<TlsEnd>,
    ) -> io::Result<Self> {
        let k = Kind::of(plan.kind.id())?;
        let path = crate::path::choose(&plan, &sockets)?;
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
            },
            sockets,
        )?;
        // Chosen here, before the start is agreed, since choosing reads every socket twice.
        let fds: Vec<i32> = stats.iter().map(|s| s.fd()).collect();
        let tcp = TcpInfos::new(&fds);
        let threads = worker_count(&plan, side, flows.len());
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
                read_size: read_size(&self.plan) as usize,
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
            stats: self.stats,
            workers,
            signals: signal_rx,
            sink,
            tls: self.tls,
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

struct Sampler {
    side: Side,
    ids: Vec<u32>,
    t0: u64,
    start: Arc<crate::gate::Gate>,
    schedule: Schedule,
    plan: Arc<TestPlan>,
    infos: Vec<FlowInfo>,
    defaults: Vec<String>,
    chosen_sndbuf: Option<u32>,
    stats: Vec<Arc<FlowStats>>,
    /// Reads every flow's TCP_INFO.
    tcp: TcpInfos,
    /// Each worker's thread (until joined) and the state it shares with the sampler.
    workers: Vec<(Option<JoinHandle<WorkerResult>>, Arc<WorkerShared>)>,
    signals: mpsc::Receiver<Signal>,
    sink: Box<dyn FnMut(Snapshot) + Send>,
    /// TLS tests: this end's configuration and its flows' handshake times.
    tls: Option<(TlsEnd, Vec<u64>)>,
}

impl Sampler {
    fn run(mut self) -> EndpointInfo {
        let mut done = 0;
        // Workers wait at the gate until this first snapshot is taken, so it holds exactly the
        // state at the start, even when this thread wakes late. An abort before then is heard:
        // a start far in the future must not outlive the test.
        let before = self.t0.saturating_sub(FIRST_SNAPSHOT_LEAD_NS);
        let mut aborted = matches!(self.wait_until(before, &mut done), Wait::Aborted);
        let (mut t, mark) = self.schedule.first();
        self.emit(mark, Some(self.t0.max(clock::now_ns())));
        self.start.open();
        while let Some((next, mark)) = self.schedule.next_after(t).filter(|_| !aborted) {
            t = next;
            match self.wait_until(self.t0.saturating_add(next), &mut done) {
                // The last worker may finish just as a deadline passes: that snapshot is taken,
                // and an open-ended (counted) test stops there instead of sampling forever.
                Wait::Reached if done == self.workers.len() => {
                    self.emit(mark, None);
                    break;
                }
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
        let results: Vec<WorkerResult> = self
            .workers
            .iter_mut()
            .filter_map(|(h, _)| h.take())
            .map(|h| h.join().unwrap_or_else(|_| panicked_worker()))
            .collect();
        if self.schedule.end().is_none() && !aborted {
            let last = self
                .stats
                .iter()
                .filter_map(|s| s.last_ns())
                .max()
                .unwrap_or_else(clock::now_ns);
            self.emit(Mark::WindowEnd, Some(last));
        }
        self.emit(Mark::Final, None);
        self.finish(results)
    }

    fn wait_until(&self, deadline: u64, done: &mut usize) -> Wait {
        loop {
            let now = clock::now_ns();
            if now >= deadline {
                // Even when every deadline is already past, an abort is heard.
                return match self.signals.try_recv() {
                    Ok(Signal::Abort) | Err(mpsc::TryRecvError::Disconnected) => Wait::Aborted,
                    Ok(Signal::WorkerDone) => {
                        *done += 1;
                        Wait::Reached
                    }
                    Err(mpsc::TryRecvError::Empty) => Wait::Reached,
                };
            }
            match self
                .signals
                .recv_timeout(Duration::from_nanos(deadline - now))
            {
                Ok(Signal::WorkerDone) => {
                    *done += 1;
                    // Workers that finish at the time limit must not cost the window's last
                    // snapshot: once the deadline has come, it is taken.
                    if *done == self.workers.len() && clock::now_ns() < deadline {
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
        self.tcp.read_all(&mut flows, &self.stats);
        let (process_user_us, process_system_us) = cpu::process_rusage_us();
        let cpu = CpuSnapshot {
            per_cpu: cpu::proc_stat(),
            threads_ns: self.threads_cpu_ns(),
            process_user_us,
            process_system_us,
        };
        let snap = Snapshot {
            mark,
            // Exact whenever the offset fits (a peer may ask for a start far away).
            t_ns: at.wrapping_sub(self.t0) as i64,
            flows,
            cpu,
            latency: self.latency(),
            kind: udp_snmp::for_plan(&self.plan),
            op_latency: latency::per_op(&self.plan, self.workers.iter().map(|w| &w.1.latency)),
        };
        (self.sink)(snap);
    }

    /// The latencies recorded since the last snapshot, merged over the workers (the kinds that
    /// time transactions, on the side that asks).
    fn latency(&self) -> Option<Vec<u8>> {
        let asks = self.plan.kind.descriptor().times_transactions()
            && self
                .plan
                .flows
                .iter()
                .any(|f| self.ids.contains(&f.id) && self.side.leads(f.dir));
        asks.then(|| {
            let mut h = latency::histogram();
            for (_, w) in &self.workers {
                w.latency.drain_into(&mut h);
            }
            latency::serialize(&h)
        })
    }

    fn threads_cpu_ns(&self) -> u64 {
        let workers: u64 = self
            .workers
            .iter()
            .map(|(h, sh)| {
                h.as_ref()
                    .and_then(|h| clock::other_thread_cpu_ns(h.as_pthread_t()))
                    .unwrap_or_else(|| sh.final_cpu_ns.load(Ordering::Acquire))
            })
            .sum();
        workers + clock::thread_cpu_ns()
    }

    fn finish(mut self, results: Vec<WorkerResult>) -> EndpointInfo {
        let rel = |ns: Option<u64>| ns.map(|v| v.wrapping_sub(self.t0) as i64);
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
            wait: if self.plan.socket.busy_poll {
                "busy-poll"
            } else {
                "epoll"
            }
            .into(),
            read_size: read_size(&self.plan),
            limits: host::buffer_limits(),
            sampler_cpu_ns: clock::thread_cpu_ns(),
            tls: self.tls.take().map(|(end, hs)| end.info(hs)),
            error,
            chosen_sndbuf: self.chosen_sndbuf,
            defaults: std::mem::take(&mut self.defaults),
        }
    }
}

enum Wait {
    Reached,
    AllDone,
    Aborted,
}

fn panicked_worker() -> WorkerResult {
    WorkerResult {
        _flows: Vec::new(),
        info: Default::default(),
        error: Some("a worker thread panicked".into()),
    }
}

/// The plan's read size, or this host's default when the plan leaves it to each end (0).
fn read_size(plan: &TestPlan) -> u32 {
    match plan.read_size {
        0 => host::default_read_size(),
        n => n,
    }
}

fn worker_count(plan: &TestPlan, side: Side, flows: usize) -> usize {
    let opts = match side {
        Side::Client => &plan.client,
        Side::Server => &plan.server,
    };
    let want = opts
        .threads
        .map(|t| t as usize)
        .unwrap_or_else(|| host::online_cpus() as usize);
    want.clamp(1, flows.max(1))
}

fn fd_buffers(fd: i32) -> (u32, u32) {
    let get = |name| {
        let mut v: i32 = 0;
        let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
        // SAFETY: valid int pointer and length.
        unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                name,
                (&mut v as *mut i32).cast(),
                &mut len,
            )
        };
        v.max(0) as u32
    };
    (get(libc::SO_SNDBUF), get(libc::SO_RCVBUF))
}
