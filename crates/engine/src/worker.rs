//! A worker: one thread, one epoll set (mio) over its share of the flows.
//!
//! It registers its flows, waits for the start (its instant, and the gate the sampler opens once it
//! has its first snapshot), kicks every flow once, then runs flows as their sockets become ready
//! or their timers fire (a worker's only flow may also wait in its reads, up to the worker's next
//! deadline: `crate::recv_wait`). Flows that could do more yield ("Again") so
//! that one busy flow cannot starve the rest. At the time limit it tells every flow to stop;
//! receivers then drain until their peers close or the drain deadline passes. Flows a flow starts
//! (one per accepted connection) get a slot of their own, keep the worker running until they
//! finish (so a transaction in progress at the end completes), and are dropped then; the flows
//! the worker began with stay alive until it returns, so their sockets can still be read.

use crate::clock;
use crate::kind::{Flow, Io, Step};
use crate::measure::latency::Latency;
use crate::payload::{memfile, payload};
use crate::timer::TimerFd;
use fathom_proto::sample::ThreadInfo;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Longest sleep in the loop, so an abort or a finish is noticed quickly.
const MAX_WAIT_NS: u64 = 100_000_000;

/// How long after the start senders wait after their first small write (see the stream kind).
const RAMP_NS: u64 = 2_000_000;

/// The timerfd's token; flows use tokens from 0 up.
const TIMER_TOKEN: mio::Token = mio::Token(usize::MAX);

/// How long receivers may drain after the end before everything stops.
pub const DRAIN_NS: u64 = 1_000_000_000;

/// What a worker needs, fixed before it starts.
pub struct WorkerPlan {
    /// The flows it serves.
    pub flows: Vec<Box<dyn Flow>>,
    /// CPU to pin to.
    pub pin: Option<u32>,
    /// CPUs to stay within, when not pinned to one.
    pub cpu_set: Option<Vec<u32>>,
    /// Start instant (monotonic ns).
    pub t0: u64,
    /// Opened by the sampler once it has its first snapshot.
    pub start: Arc<crate::gate::Gate>,
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
    /// Senders stop here (monotonic ns; u64::MAX until a time limit or a finish sets it), and
    /// everything stops [`DRAIN_NS`] later, drained or not.
    pub end_ns: Arc<AtomicU64>,
    /// The worker's CPU time when it finished, ns.
    pub final_cpu_ns: AtomicU64,
    /// Latencies recorded by the worker's flows.
    pub latency: Latency,
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
pub fn run(plan: WorkerPlan, shared: &WorkerShared) -> WorkerResult {
    // Wake at the start instant itself, not up to the default 50 µs slack later.
    // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let pin = plan.pin;
    let initial = plan.flows.len() as u32;
    let place = pin.map(|cpu| vec![cpu]).or_else(|| plan.cpu_set.clone());
    let mut error = place.and_then(|cpus| {
        clock::confine_to(&cpus)
            .err()
            .map(|e| format!("cannot place a worker on CPUs {cpus:?}: {e}"))
    });
    let mut lp = Loop::new(plan);
    if error.is_none() {
        if let Err(e) = lp.run(shared) {
            error = Some(e.to_string());
        }
    }
    let cpu_ns = clock::thread_cpu_ns();
    shared.final_cpu_ns.store(cpu_ns, Ordering::Release);
    WorkerResult {
        info: ThreadInfo {
            pinned: pin,
            last_cpu: clock::current_cpu(),
            flows: initial,
            cpu_ns,
        },
        _flows: lp.into_initial_flows(),
        error,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for readiness or its timer.
    Idle,
    /// In the run queue.
    Queued,
    /// Finished.
    Done,
}

struct Slot {
    flow: Box<dyn Flow>,
    state: State,
    /// A flow the worker began with (kept until the end) rather than one a flow started.
    initial: bool,
    /// The earliest timer entry in the heap for this slot.
    armed: Option<u64>,
}

struct Loop {
    plan: WorkerPlan,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    ready: Vec<usize>,
    later: Vec<usize>,
    timers: BinaryHeap<Reverse<(u64, usize)>>,
    live: usize,
    first_error: Option<io::Error>,
}

impl Loop {
    fn new(mut plan: WorkerPlan) -> Loop {
        let flows = std::mem::take(&mut plan.flows);
        let n = flows.len();
        let slots = flows
            .into_iter()
            .map(|flow| {
                Some(Slot {
                    flow,
                    state: State::Queued,
                    initial: true,
                    armed: None,
                })
            })
            .collect();
        Loop {
            plan,
            slots,
            free: Vec::new(),
            ready: (0..n).collect(),
            later: Vec::with_capacity(n),
            timers: BinaryHeap::new(),
            live: n,
            first_error: None,
        }
    }

    fn into_initial_flows(self) -> Vec<Box<dyn Flow>> {
        self.slots
            .into_iter()
            .flatten()
            .filter(|s| s.initial)
            .map(|s| s.flow)
            .collect()
    }

    /// The time limit passed: tells every flow not yet done to stop.
    fn stop_flows(&mut self, io: &mut Io<'_>) {
        for i in 0..self.slots.len() {
            if self.slots[i]
                .as_ref()
                .is_some_and(|s| s.state != State::Done)
            {
                io.token = mio::Token(i);
                let r = self.slot(i).flow.stop(io);
                self.settle(i, r);
            }
        }
    }

    fn run(&mut self, shared: &WorkerShared) -> io::Result<()> {
        let mut poll = mio::Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let mut events = mio::Events::with_capacity(self.slots.len().clamp(16, 1024));
        let mut timerfd = self.register(&registry)?;
        let wbuf = payload(self.plan.write_size);
        let mut rbuf = vec![0u8; self.plan.read_size];
        let zc = if self.plan.zerocopy {
            Some(memfile(&wbuf)?)
        } else {
            None
        };
        let mut spawned: Vec<Box<dyn Flow>> = Vec::new();
        let mut io = Io {
            wbuf: &wbuf,
            rbuf: &mut rbuf,
            zc_file: zc.as_ref().map(|f| f.as_raw_fd()),
            end_ns: shared.end_ns.load(Ordering::Relaxed),
            ramp_until: self.plan.t0.saturating_add(RAMP_NS),
            registry: &registry,
            token: mio::Token(0),
            latency: &shared.latency,
            spawned: &mut spawned,
            wait_until: 0,
        };

        // The gate opens just before t0, or at once on an abort (so that an abort before a
        // distant start is heard).
        self.plan.start.pass();
        if !shared.abort.load(Ordering::Relaxed) {
            clock::sleep_until(self.plan.t0);
        }
        let mut stopped = false;
        while self.live > 0 && !shared.abort.load(Ordering::Relaxed) {
            let now = clock::now_ns();
            io.end_ns = shared.end_ns.load(Ordering::Relaxed);
            if now >= io.end_ns.saturating_add(DRAIN_NS) {
                break;
            }
            if !stopped && now >= io.end_ns {
                stopped = true;
                self.stop_flows(&mut io);
            }
            self.fire_timers(now);
            io.wait_until = self.read_deadline(io.end_ns, stopped);
            self.run_ready(&mut io);
            self.adopt(io.spawned, &registry)?;
            self.reap();
            if self.live == 0 {
                // The last flow just ended: sleeping in epoll now would only delay the end
                // (by up to MAX_WAIT_NS; every receiver of a counted test paid it).
                break;
            }
            if self.plan.busy_poll {
                // Spinning: try every flow again at once, as a minimal ping-pong loop would,
                // with no epoll call in between.
                self.requeue_all();
                continue;
            }
            self.wait(&mut poll, &mut events, &mut timerfd, io.end_ns, stopped)?;
        }
        match self.first_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Registers the initial flows under their slot numbers and a timerfd for the flows' timers.
    fn register(&mut self, registry: &mio::Registry) -> io::Result<TimerFd> {
        for (i, s) in self.slots.iter_mut().enumerate() {
            s.as_mut()
                .expect("initial slots are full")
                .flow
                .register(registry, mio::Token(i))?;
        }
        let timerfd = TimerFd::new()?;
        registry.register(
            &mut mio::unix::SourceFd(&timerfd.raw()),
            TIMER_TOKEN,
            mio::Interest::READABLE,
        )?;
        Ok(timerfd)
    }

    /// Runs every queued flow once; those that yield go to the back of the queue.
    fn run_ready(&mut self, io: &mut Io<'_>) {
        let mut batch = std::mem::take(&mut self.ready);
        for &i in &batch {
            if self.slots[i]
                .as_ref()
                .is_some_and(|s| s.state == State::Queued)
            {
                self.slot(i).state = State::Idle;
                io.token = mio::Token(i);
                let r = self.slot(i).flow.run(io);
                self.settle(i, r);
            }
        }
        batch.clear();
        self.ready = batch;
        std::mem::swap(&mut self.ready, &mut self.later);
    }

    /// Sleeps in epoll until a flow's socket is ready, its timer fires or the next deadline
    /// (not at all while flows are queued), and queues the flows that became ready.
    fn wait(
        &mut self,
        poll: &mut mio::Poll,
        events: &mut mio::Events,
        timerfd: &mut TimerFd,
        end_ns: u64,
        stopped: bool,
    ) -> io::Result<()> {
        let timeout = self.timeout(end_ns, stopped);
        if timeout > 0 {
            if let Some(&Reverse((t, _))) = self.timers.peek() {
                timerfd.set(t)?;
            }
        }
        match poll.poll(events, Some(std::time::Duration::from_nanos(timeout))) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e),
            _ => {}
        }
        for ev in events.iter() {
            if ev.token() == TIMER_TOKEN {
                timerfd.clear();
            } else {
                self.queue(ev.token().0);
            }
        }
        Ok(())
    }

    fn slot(&mut self, i: usize) -> &mut Slot {
        self.slots[i].as_mut().expect("a live slot")
    }

    fn queue(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i).and_then(Option::as_mut) {
            if s.state == State::Idle {
                s.state = State::Queued;
                self.ready.push(i);
            }
        }
    }

    fn requeue_all(&mut self) {
        for i in 0..self.slots.len() {
            self.queue(i);
        }
    }

    fn settle(&mut self, i: usize, r: io::Result<Step>) {
        match r {
            Ok(Step::Wait) => self.arm(i),
            Ok(Step::Again) => {
                let s = self.slot(i);
                if s.state == State::Idle {
                    s.state = State::Queued;
                    self.later.push(i);
                }
            }
            Ok(Step::Done) | Err(_) => {
                let s = self.slot(i);
                let initial = s.initial;
                let newly_done = s.state != State::Done;
                s.state = State::Done;
                // A connection a flow started may fail without failing the test.
                if let (Err(e), true) = (r, initial) {
                    self.first_error.get_or_insert(e);
                }
                if newly_done {
                    self.live -= 1;
                }
            }
        }
    }

    fn arm(&mut self, i: usize) {
        let s = self.slot(i);
        if let Some(t) = s.flow.timer() {
            if s.armed.is_none_or(|a| t < a) {
                s.armed = Some(t);
                self.timers.push(Reverse((t, i)));
            }
        }
    }

    fn fire_timers(&mut self, now: u64) {
        while let Some(&Reverse((t, i))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            if let Some(s) = self.slots.get_mut(i).and_then(Option::as_mut) {
                if s.armed == Some(t) {
                    s.armed = None;
                    self.queue(i);
                }
            }
        }
    }

    fn adopt(
        &mut self,
        spawned: &mut Vec<Box<dyn Flow>>,
        registry: &mio::Registry,
    ) -> io::Result<()> {
        for mut flow in spawned.drain(..) {
            let i = self.free.pop().unwrap_or_else(|| {
                self.slots.push(None);
                self.slots.len() - 1
            });
            flow.register(registry, mio::Token(i))?;
            self.slots[i] = Some(Slot {
                flow,
                state: State::Queued,
                initial: false,
                armed: None,
            });
            self.ready.push(i);
            self.live += 1;
        }
        Ok(())
    }

    /// Drops finished flows that a flow started (their sockets close), freeing their slots.
    fn reap(&mut self) {
        for i in 0..self.slots.len() {
            if self.slots[i]
                .as_ref()
                .is_some_and(|s| !s.initial && s.state == State::Done)
            {
                self.slots[i] = None;
                self.free.push(i);
            }
        }
    }

    /// Until when the flow may wait in its reads (`Io::wait_until`): when it is the worker's
    /// only flow and the worker does not spin, until the worker's next deadline (the end, or the
    /// drain's end once stopped, or the flow's timer); otherwise 0, never.
    fn read_deadline(&self, end_ns: u64, stopped: bool) -> u64 {
        let only = !self.plan.busy_poll && self.slots.len() == 1;
        let timer = self.timers.peek().map(|Reverse((t, _))| *t);
        read_deadline(only, end_ns, stopped, timer)
    }

    fn timeout(&self, end_ns: u64, stopped: bool) -> u64 {
        if !self.ready.is_empty() {
            return 0;
        }
        let end = if stopped {
            end_ns.saturating_add(DRAIN_NS)
        } else {
            end_ns
        };
        let now = clock::now_ns();
        match self.timers.peek() {
            Some(Reverse((t, _))) if *t <= now => 0,
            _ => end.saturating_sub(now).min(MAX_WAIT_NS),
        }
    }
}

/// Until when a worker's flow may wait in its reads: 0 (never) unless it is the `only` one the
/// worker runs; then the end (`end_ns`), or the drain's end once `stopped`, or its `timer` if
/// sooner.
fn read_deadline(only: bool, end_ns: u64, stopped: bool, timer: Option<u64>) -> u64 {
    if !only {
        return 0;
    }
    let end = if stopped {
        end_ns.saturating_add(DRAIN_NS)
    } else {
        end_ns
    };
    timer.map_or(end, |t| t.min(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lone_flow_waits_in_its_reads() {
        assert_eq!(read_deadline(false, 5_000, false, None), 0);
        assert_eq!(read_deadline(true, 5_000, false, None), 5_000);
    }

    #[test]
    fn the_read_deadline_is_the_workers_next_one() {
        // The flow's timer before the end, the end before a later timer.
        assert_eq!(read_deadline(true, 5_000, false, Some(3_000)), 3_000);
        assert_eq!(read_deadline(true, 5_000, false, Some(9_000)), 5_000);
        // Once stopped, the drain's end; with no time limit, no deadline but the timer's.
        assert_eq!(read_deadline(true, 5_000, true, None), 5_000 + DRAIN_NS);
        assert_eq!(read_deadline(true, u64::MAX, true, None), u64::MAX);
        assert_eq!(read_deadline(true, u64::MAX, false, Some(7)), 7);
    }
}
