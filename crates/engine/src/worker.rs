//! A worker: one thread, one epoll set (mio) over its share of the flows.
//!
//! It sleeps until the common start instant, kicks every flow once, then runs flows as their
//! sockets become ready. Flows that could do more yield ("Again") so that one busy flow cannot
//! starve the rest. At the time limit it tells every flow to stop; receivers then drain until
//! their peers close or the drain deadline passes.

use crate::clock;
use crate::kind::{Flow, Io, Step};
use fathom_proto::sample::ThreadInfo;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Longest sleep in the loop, so an abort is noticed quickly.
const MAX_WAIT_NS: u64 = 100_000_000;

/// What a worker needs, fixed before it starts.
pub struct WorkerPlan {
    /// The flows it serves.
    pub flows: Vec<Box<dyn Flow>>,
    /// CPU to pin to.
    pub pin: Option<u32>,
    /// Start instant (monotonic ns).
    pub t0: u64,
    /// Passed by every worker and the sampler at t0, once the sampler has its first snapshot.
    pub start: Arc<std::sync::Barrier>,
    /// Senders stop here (u64::MAX: when their byte count is done).
    pub end_ns: u64,
    /// Everything stops here, drained or not (u64::MAX: never).
    pub hard_end_ns: u64,
    /// Spin instead of sleeping.
    pub busy_poll: bool,
    /// Size of the write buffer.
    pub write_size: usize,
    /// Size of the read buffer.
    pub read_size: usize,
    /// Prepare an in-memory file for sendfile.
    pub zerocopy: bool,
}

/// State shared between a worker and the sampler.
#[derive(Default)]
pub struct WorkerShared {
    /// Set to end the test now.
    pub abort: Arc<AtomicBool>,
    /// The worker's CPU time when it finished, ns.
    pub final_cpu_ns: AtomicU64,
}

/// What a worker hands back: its flows (sockets still open, for final readings) and facts.
pub struct WorkerResult {
    /// The flows, kept alive so their sockets stay open for the sampler's final readings.
    pub _flows: Vec<Box<dyn Flow>>,
    /// Where the thread ran and what it cost.
    pub info: ThreadInfo,
    /// The first error a flow hit.
    pub error: Option<String>,
}

/// Runs a worker on the calling thread.
pub fn run(mut plan: WorkerPlan, shared: &WorkerShared) -> WorkerResult {
    let mut error = None;
    if let Some(cpu) = plan.pin {
        if let Err(e) = clock::pin_to(cpu) {
            error = Some(format!("cannot pin a worker to CPU {cpu}: {e}"));
        }
    }
    if error.is_none() {
        if let Err(e) = event_loop(&mut plan, shared) {
            error = Some(e.to_string());
        }
    }
    let cpu_ns = clock::thread_cpu_ns();
    shared.final_cpu_ns.store(cpu_ns, Ordering::Release);
    WorkerResult {
        info: ThreadInfo {
            pinned: plan.pin,
            last_cpu: clock::current_cpu(),
            flows: plan.flows.len() as u32,
            cpu_ns,
        },
        _flows: plan.flows,
        error,
    }
}

fn event_loop(plan: &mut WorkerPlan, shared: &WorkerShared) -> io::Result<()> {
    let n = plan.flows.len();
    let mut poll = mio::Poll::new()?;
    let mut events = mio::Events::with_capacity(n.clamp(16, 1024));
    for (i, f) in plan.flows.iter_mut().enumerate() {
        let interest = f.interest();
        poll.registry().register(f.source(), mio::Token(i), interest)?;
    }
    let wbuf = payload(plan.write_size);
    let mut rbuf = vec![0u8; plan.read_size];
    let zc = if plan.zerocopy { Some(memfile(&wbuf)?) } else { None };
    let mut io = Io {
        wbuf: &wbuf,
        rbuf: &mut rbuf,
        zc_file: zc.as_ref().map(|f| f.as_raw_fd()),
        end_ns: plan.end_ns,
    };

    clock::sleep_until(plan.t0);
    plan.start.wait();
    let mut state = vec![FlowState::Queued; n];
    let mut ready: Vec<usize> = (0..n).collect();
    let mut later: Vec<usize> = Vec::with_capacity(n);
    let mut live = n;
    let mut stopped = false;
    let mut first_error: Option<io::Error> = None;

    while live > 0 && !shared.abort.load(Ordering::Relaxed) {
        let now = clock::now_ns();
        if now >= plan.hard_end_ns {
            break;
        }
        if !stopped && now >= plan.end_ns {
            stopped = true;
            for i in 0..n {
                if state[i] != FlowState::Done {
                    let r = plan.flows[i].stop();
                    settle(i, r, &mut state, &mut later, &mut live, &mut first_error);
                }
            }
        }
        for i in ready.drain(..) {
            if state[i] == FlowState::Queued {
                state[i] = FlowState::Idle;
                let r = plan.flows[i].run(&mut io);
                settle(i, r, &mut state, &mut later, &mut live, &mut first_error);
            }
        }
        std::mem::swap(&mut ready, &mut later);
        let timeout_ns = if !ready.is_empty() || plan.busy_poll {
            0
        } else {
            let next = if stopped { plan.hard_end_ns } else { plan.end_ns.min(plan.hard_end_ns) };
            next.saturating_sub(clock::now_ns()).min(MAX_WAIT_NS)
        };
        match poll.poll(&mut events, Some(std::time::Duration::from_nanos(timeout_ns))) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e),
            _ => {}
        }
        for ev in events.iter() {
            let i = ev.token().0;
            if state[i] == FlowState::Idle {
                state[i] = FlowState::Queued;
                ready.push(i);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FlowState {
    /// Waiting for readiness.
    Idle,
    /// In the run queue.
    Queued,
    /// Finished.
    Done,
}

fn settle(
    i: usize,
    r: io::Result<Step>,
    state: &mut [FlowState],
    later: &mut Vec<usize>,
    live: &mut usize,
    first_error: &mut Option<io::Error>,
) {
    match r {
        Ok(Step::Wait) => {}
        Ok(Step::Again) => {
            if state[i] == FlowState::Idle {
                state[i] = FlowState::Queued;
                later.push(i);
            }
        }
        Ok(Step::Done) | Err(_) => {
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
            if state[i] != FlowState::Done {
                state[i] = FlowState::Done;
                *live -= 1;
            }
        }
    }
}

/// A payload buffer of pseudo-random bytes (so nothing on the path can compress it).
fn payload(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// An in-memory file holding `bytes`, for sendfile.
fn memfile(bytes: &[u8]) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: the name is a valid C string; a new descriptor is returned or -1.
    let fd: RawFd = unsafe { libc::memfd_create(c"fathom-payload".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nobody else.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    use std::io::Write;
    (&file).write_all(bytes)?;
    Ok(file.into())
}
