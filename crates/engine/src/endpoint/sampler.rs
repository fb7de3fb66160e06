//! The sampler thread of an endpoint: it takes the first snapshot, opens the gate, snapshots
//! every counter at the schedule's boundaries, notices workers ending or an abort, and builds
//! the endpoint's closing information.

use super::{fd_buffers, Signal, FIRST_SNAPSHOT_LEAD_NS};
use crate::clock;
use crate::kind::Side;
use crate::measure::{counters::FlowStats, cpu, host, latency, sock_diag::TcpInfos, udp_snmp};
use crate::schedule::Schedule;
use crate::tls::TlsEnd;
use crate::worker::{WorkerResult, WorkerShared};
use fathom_proto::plan::TestPlan;
use fathom_proto::sample::{CpuSnapshot, EndpointInfo, FlowInfo, Mark, Snapshot};
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub(super) struct Sampler {
    pub(super) side: Side,
    pub(super) ids: Vec<u32>,
    pub(super) t0: u64,
    pub(super) start: Arc<crate::gate::Gate>,
    pub(super) schedule: Schedule,
    pub(super) plan: Arc<TestPlan>,
    pub(super) infos: Vec<FlowInfo>,
    pub(super) defaults: Vec<String>,
    pub(super) chosen_sndbuf: Option<u32>,
    /// The read size this end's receivers use.
    pub(super) read_size: u32,
    pub(super) stats: Vec<Arc<FlowStats>>,
    /// Reads every flow's TCP_INFO.
    pub(super) tcp: TcpInfos,
    /// Each worker's thread (until joined) and the state it shares with the sampler.
    pub(super) workers: Vec<(Option<JoinHandle<WorkerResult>>, Arc<WorkerShared>)>,
    pub(super) signals: mpsc::Receiver<Signal>,
    pub(super) sink: Box<dyn FnMut(Snapshot) + Send>,
    /// TLS tests: this end's configuration and its flows' handshake times.
    pub(super) tls: Option<(TlsEnd, Vec<u64>)>,
    /// /proc/stat, open from the first snapshot to the last.
    pub(super) proc_stat: cpu::ProcStat,
}

impl Sampler {
    pub(super) fn run(mut self) -> EndpointInfo {
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
            per_cpu: self.proc_stat.read(),
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
            if let Some((granted, end)) = st.buffers() {
                (info.sndbuf, info.rcvbuf) = granted;
                (info.sndbuf_end, info.rcvbuf_end) = end;
            }
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
            // The flows' sockets close as `results` drops, after `sampler_cpu_ns` is read:
            // any tool's end pays for that, and no measurement does.
            threads: results.iter().map(|r| r.info.clone()).collect(),
            wait: if self.plan.socket.busy_poll {
                "busy-poll"
            } else {
                "epoll"
            }
            .into(),
            read_size: self.read_size,
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
