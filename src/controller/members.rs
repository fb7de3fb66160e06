//! The ends of a running test as the controller holds them (its own in-process end, or agents
//! over control connections), and the collector that starts them at one instant and gathers
//! their snapshots, ending everything when one fails.

use super::control::{send, ClockSync, Control, Sender};
use super::error::ControlError;
use super::keepalive::Stop;
use super::progress::Progress;
use fathom_engine::{clock, Aborter, Prepared};
use fathom_proto::sample::{EndpointInfo, FlowInfo, Snapshot};
use fathom_proto::{ToAgent, ToController};
use fathom_report::live::Live;
use fathom_report::{EndData, Role, RunData};
use std::collections::VecDeque;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the ends may take to stop after an abort before the controller gives up on them.
const ABORT_GRACE: Duration = Duration::from_secs(3);
/// How long past the start instant the controller's own end waits for the agents' first
/// snapshots before it starts anyway (an agent that failed says so on its own).
const AGENT_WAIT: Duration = Duration::from_secs(1);

/// One end before the start.
pub enum Member {
    /// The controller's own end, boxed: it is by far the larger variant.
    Local(Box<Prepared>),
    /// An agent.
    Remote(Control, ClockSync),
}

impl Member {
    /// The controller's own end.
    pub fn local(p: Prepared) -> Member {
        Member::Local(Box::new(p))
    }

    /// An agent, with its clock relation.
    pub fn remote(c: Control, s: ClockSync) -> Member {
        Member::Remote(c, s)
    }

    /// Waits for an agent's `Connected`.
    pub fn connected(&mut self) -> Result<Vec<FlowInfo>, ControlError> {
        match self {
            Member::Remote(c, _) => c.connected(),
            Member::Local(p) => Ok(p.flow_infos().to_vec()),
        }
    }
}

/// A started end.
enum Running {
    Local {
        aborter: Aborter,
        joiner: JoinHandle<()>,
    },
    Remote {
        sender: Sender,
        stream: TcpStream,
        reader: JoinHandle<()>,
    },
}

enum Event {
    Snap(usize, Box<Snapshot>),
    Done(usize, Box<EndpointInfo>),
    Failed(usize, String),
}

/// Starts the ends and gathers what they measure.
pub struct Collector {
    run: RunData,
    running: Vec<Running>,
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
    progress: Progress,
    live: Option<Live>,
    /// The agents started so far, by end.
    agents: Vec<usize>,
    /// Events read before the collection began (while [`Collector::await_agents`] waited).
    early: VecDeque<Event>,
}

impl Collector {
    /// A collector for the ends of `run` (the server first); `live` prints interval lines as
    /// they close (with each client host's share when it says so).
    pub fn new(run: RunData, progress: bool, total_s: Option<f64>, live: Option<bool>) -> Self {
        let (tx, rx) = mpsc::channel();
        let n = run.ends.len();
        Collector {
            live: live.map(|per_host| Live::new(&run, per_host)),
            run,
            running: Vec::new(),
            tx,
            rx,
            progress: Progress::new(progress, total_s, n),
            agents: Vec::new(),
            early: VecDeque::new(),
        }
    }

    /// Waits until every agent started so far has taken its first snapshot, so that its
    /// receivers count from before anything this process sends can reach them; or until one
    /// of them failed or finished, or [`AGENT_WAIT`] past `t0` (the controller's clock). What
    /// arrives meanwhile is kept for [`Collector::collect`].
    pub fn await_agents(&mut self, t0: u64) {
        let until = t0.saturating_add(AGENT_WAIT.as_nanos() as u64);
        let mut waiting = self.agents.clone();
        while !waiting.is_empty() {
            let left = until.saturating_sub(clock::now_ns());
            let Ok(ev) = self.rx.recv_timeout(Duration::from_nanos(left)) else {
                return;
            };
            match &ev {
                Event::Snap(i, _) => waiting.retain(|w| w != i),
                Event::Done(..) | Event::Failed(..) => waiting.clear(),
            }
            self.early.push_back(ev);
        }
    }

    /// Starts end `i` at `t0` (the controller's clock).
    pub fn start(&mut self, i: usize, m: Member, t0: u64) -> Result<(), ControlError> {
        let tx = self.tx.clone();
        let r = match m {
            Member::Local(p) => {
                let snap_tx = tx.clone();
                let running = p
                    .start(
                        t0,
                        Box::new(move |s| drop(snap_tx.send(Event::Snap(i, Box::new(s))))),
                    )
                    .map_err(ControlError::Start)?;
                let aborter = running.aborter();
                let joiner = std::thread::spawn(move || {
                    drop(tx.send(Event::Done(i, Box::new(running.join()))))
                });
                Running::Local { aborter, joiner }
            }
            Member::Remote(ctl, sync) => {
                ctl.send(&ToAgent::Start {
                    t0: t0.wrapping_add_signed(sync.offset_ns),
                })?;
                let sender = ctl.sender();
                let silence =
                    Duration::from_nanos(self.run.plan.interval_ns) + Duration::from_secs(5);
                let (mut conn, stream) = ctl.into_reader(silence);
                let reader = std::thread::spawn(move || loop {
                    let ev = match conn.recv::<ToController>(fathom_proto::MAX_FRAME) {
                        Ok(Some(ToController::Snapshot(s))) => Event::Snap(i, s),
                        Ok(Some(ToController::Done(info))) => Event::Done(i, info),
                        Ok(Some(ToController::Error { message })) => Event::Failed(i, message),
                        Ok(Some(_)) => continue,
                        Ok(None) => Event::Failed(i, "the agent closed the connection".into()),
                        Err(e) => Event::Failed(i, super::control::waited(e, silence)),
                    };
                    let last = !matches!(ev, Event::Snap(..));
                    if tx.send(ev).is_err() || last {
                        break;
                    }
                });
                self.agents.push(i);
                Running::Remote {
                    sender,
                    stream,
                    reader,
                }
            }
        };
        self.running.push(r);
        Ok(())
    }

    /// Gathers snapshots until every end is done (or, after a failure or an interrupt, until the
    /// others stopped), printing interval lines as they close if asked to; `askers` says which
    /// role asks in a request/response test, so that the answering side can be told to finish
    /// once the askers are done. The run comes back with its snapshots, facts and error.
    pub fn collect(mut self, interrupted: &AtomicBool, askers: Option<Role>) -> RunData {
        let n = self.run.ends.len();
        if let Some(live) = &self.live {
            self.progress.print(&live.head(&self.run));
        }
        let heartbeat_stop = Arc::new(Stop::default());
        let heartbeat = self.heartbeat(heartbeat_stop.clone());
        let mut done = vec![false; n];
        let mut finished = false;
        let mut error: Option<String> = None;
        let mut abort_at: Option<Instant> = None;
        while done.iter().any(|d| !d) {
            if abort_at.is_none() && interrupted.load(Ordering::Relaxed) {
                error.get_or_insert_with(|| "interrupted".into());
                abort_at = Some(Instant::now());
                self.abort_all("interrupted at the controller");
            }
            if abort_at.is_some_and(|t| t.elapsed() > ABORT_GRACE) {
                break;
            }
            let next = match self.early.pop_front() {
                Some(ev) => Ok(ev),
                None => self.rx.recv_timeout(Duration::from_millis(100)),
            };
            let ev = match next {
                Ok(ev) => ev,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match ev {
                Event::Snap(i, s) => {
                    self.progress.snapshot(i, &s);
                    self.run.ends[i].snaps.push(*s);
                    self.show_live(&done);
                }
                Event::Done(i, info) => {
                    done[i] = true;
                    if let Some(e) = &info.error {
                        keep_cause(&mut error, format!("{}: {e}", self.describe(i)));
                    }
                    self.run.ends[i].info = *info;
                    self.show_live(&done);
                }
                Event::Failed(i, message) => {
                    done[i] = true;
                    keep_cause(&mut error, format!("{}: {message}", self.describe(i)));
                    if abort_at.is_none() {
                        abort_at = Some(Instant::now());
                        self.abort_all(&format!("{} failed", self.run.ends[i].name));
                    }
                }
            }
            if let (Some(role), false) = (askers, finished) {
                let askers_done = (0..n)
                    .filter(|&i| self.run.ends[i].role == role)
                    .all(|i| done[i]);
                if askers_done {
                    finished = true;
                    self.finish_where(|e| e.role != role);
                }
            }
        }
        self.show_live(&vec![true; n]);
        self.progress.finish();
        heartbeat_stop.set();
        self.close();
        let _ = heartbeat.join();
        self.run.error = error;
        self.run
    }

    /// Prints the interval lines every end not yet `done` has passed, if lines are wanted.
    fn show_live(&mut self, done: &[bool]) {
        if let Some(live) = &mut self.live {
            let text = live.lines(&self.run, done);
            if !text.is_empty() {
                self.progress.print(&text);
            }
        }
    }

    /// "agent at NAME" or "the local end".
    fn describe(&self, i: usize) -> String {
        if self.run.ends[i].in_process {
            "local end".into()
        } else {
            format!("agent at {}", self.run.ends[i].name)
        }
    }

    fn abort_all(&self, reason: &str) {
        for r in &self.running {
            match r {
                Running::Local { aborter, .. } => aborter.abort(),
                Running::Remote { sender, .. } => drop(send(
                    sender,
                    &ToAgent::Abort {
                        reason: reason.into(),
                    },
                )),
            }
        }
    }

    /// Ends gracefully the ends matching `which` (the answerers of a request/response test).
    fn finish_where(&self, which: impl Fn(&EndData) -> bool) {
        for (r, e) in self.running.iter().zip(&self.run.ends) {
            if which(e) {
                match r {
                    Running::Local { aborter, .. } => aborter.finish(),
                    Running::Remote { sender, .. } => drop(send(sender, &ToAgent::Finish)),
                }
            }
        }
    }

    fn heartbeat(&self, stop: Arc<Stop>) -> JoinHandle<()> {
        let senders: Vec<Sender> = self
            .running
            .iter()
            .filter_map(|r| match r {
                Running::Remote { sender, .. } => Some(sender.clone()),
                Running::Local { .. } => None,
            })
            .collect();
        std::thread::spawn(move || super::keepalive::beat(&senders, &stop))
    }

    /// Says goodbye to every agent and waits for every thread.
    fn close(&mut self) {
        for r in self.running.drain(..) {
            match r {
                Running::Local { aborter, joiner } => {
                    aborter.abort();
                    let _ = joiner.join();
                }
                Running::Remote {
                    sender,
                    stream,
                    reader,
                } => {
                    let _ = send(&sender, &ToAgent::Close);
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    let _ = reader.join();
                }
            }
        }
    }
}

/// Keeps the test's first error, unless it only says that the connection broke (the other
/// end stopped reading, reset it, or closed a file copy's range early) and a later one says
/// why: a receiving agent's full disk shows first as "Broken pipe" at the sender, a sending
/// agent's shrunken source as "the sender closed after N of M bytes" at the receiver.
fn keep_cause(error: &mut Option<String>, new: String) {
    let consequence = |e: &str| {
        e.contains("(os error 32)")
            || e.contains("(os error 104)")
            || e.contains("the sender closed after")
    };
    match error {
        Some(old) if consequence(old) && !consequence(&new) => *error = Some(new),
        Some(_) => {}
        None => *error = Some(new),
    }
}

#[cfg(test)]
mod tests {
    use super::keep_cause;

    #[test]
    fn a_broken_connection_yields_to_its_cause() {
        let mut e = None;
        keep_cause(&mut e, "the local end: Broken pipe (os error 32)".into());
        keep_cause(&mut e, "agent at a: disk full after 65536 bytes".into());
        keep_cause(&mut e, "agent at b: later".into());
        assert_eq!(
            e.as_deref(),
            Some("agent at a: disk full after 65536 bytes")
        );
    }

    #[test]
    fn a_copy_cut_short_yields_to_the_senders_cause() {
        let mut e = None;
        keep_cause(
            &mut e,
            "local end: the sender closed after 1048576 of 17179869184 bytes of its range".into(),
        );
        keep_cause(
            &mut e,
            "agent at a: the source file ended at byte 1048576 while being sent".into(),
        );
        assert!(e.unwrap().contains("source file ended"));
    }
}
