//! The controller: runs one test against one agent. Connects and authenticates, estimates the
//! agent's clock offset, sends the plan, opens the data connections, starts both ends at one
//! instant, and collects both ends' snapshots until they finish. Whatever happens after the start,
//! it returns what was measured, with the error beside it.

mod control;
mod data;
mod progress;
mod target;

pub use target::Target;

use control::Control;
use fathom_engine::{clock, Prepared, Side};
use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::sample::{EndpointInfo, Snapshot};
use fathom_proto::{ToAgent, ToController};
use fathom_report::{EndData, RunData};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

/// How the controller runs a test.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The agent's key.
    pub key: Option<Vec<u8>>,
    /// Local address for data connections.
    pub bind: Option<IpAddr>,
    /// Show the live progress line (if stderr is a terminal).
    pub progress: bool,
}

/// The shortest default UDP timeout: scheduling noise alone can exceed a loopback round trip.
const UDP_TIMEOUT_FLOOR_NS: u64 = 2_000_000;

enum Event {
    Local(Box<Snapshot>),
    LocalDone(Box<EndpointInfo>),
    Remote(Result<ToController, String>),
}

/// Runs `plan` against `target`. `Err` only when nothing could be measured.
pub fn run(target: &Target, mut plan: TestPlan, opts: &RunOptions, interrupted: &AtomicBool) -> Result<RunData, String> {
    let mut ctl = Control::connect(target.addr, &target.name, opts.key.as_deref(), Duration::from_secs(5))?;
    let sync = ctl.sync(8)?;
    if let Some(rr) = plan.rr.as_mut().filter(|rr| rr.udp_timeout_ns == 0) {
        rr.udp_timeout_ns = (4 * sync.rtt_ns).max(UDP_TIMEOUT_FLOOR_NS);
    }
    let agent = ctl.setup(&plan, target.addr.ip())?;
    let socks = data::connect(&agent, &plan, opts.bind)?;
    let plan = Arc::new(plan);
    let local = Prepared::new(plan.clone(), Side::Controller, socks).map_err(|e| format!("cannot set up the flows: {e}"))?;
    let remote_flows = ctl.connected()?;
    if !remote_flows.iter().map(|f| f.id).eq(plan.flows.iter().map(|f| f.id)) {
        return Err(format!("agent at {}: its flows do not match the plan's", target.name));
    }

    let started_unix_s = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    let lead = 100_000_000 + 4 * sync.rtt_ns.min(250_000_000);
    let t0 = clock::now_ns() + lead;
    let (tx, rx) = mpsc::channel();
    ctl.send(&ToAgent::Start { t0: (t0 as i64 + sync.offset_ns) as u64 })?;
    let local_tx = tx.clone();
    let running = local
        .start(t0, Box::new(move |s| drop(local_tx.send(Event::Local(Box::new(s))))))
        .map_err(|e| format!("cannot start the test: {e}"))?;
    let aborter = running.aborter();
    let done_tx = tx.clone();
    let joiner = std::thread::spawn(move || drop(done_tx.send(Event::LocalDone(Box::new(running.join())))));

    let heartbeat_stop = Arc::new(AtomicBool::new(false));
    let heartbeat = spawn_heartbeat(ctl.sender(), heartbeat_stop.clone());
    let silence = Duration::from_nanos(plan.interval_ns) + Duration::from_secs(5);
    let sender = ctl.sender();
    let (mut reader, stream) = ctl.into_reader(silence);
    let remote_tx = tx.clone();
    let reader_thread = std::thread::spawn(move || loop {
        let m = match reader.recv::<ToController>() {
            Ok(Some(m)) => Ok(m),
            Ok(None) => Err("the agent closed the connection".to_string()),
            Err(e) => Err(e.to_string()),
        };
        let end = m.is_err() || matches!(m, Ok(ToController::Done(_)) | Ok(ToController::Error { .. }));
        if remote_tx.send(Event::Remote(m)).is_err() || end {
            break;
        }
    });
    drop(tx);

    let total_s = match plan.limit {
        Limit::Time { duration_ns } => Some((plan.omit_ns + duration_ns) as f64 / 1e9),
        _ => None,
    };
    let mut progress = progress::Progress::new(opts.progress, total_s);
    let mut run = RunData {
        plan: (*plan).clone(),
        local: EndData::default(),
        remote: EndData { info: EndpointInfo { flows: remote_flows, ..Default::default() }, snaps: Vec::new() },
        agent: target.name.clone(),
        embedded: target.embedded,
        started_unix_s,
        clock_offset_ns: sync.offset_ns,
        control_rtt_ns: sync.rtt_ns,
        error: None,
    };
    let (mut local_done, mut remote_done) = (false, false);
    let mut abort_at: Option<Instant> = None;
    while !(local_done && remote_done) {
        if abort_at.is_none() && interrupted.load(Ordering::Relaxed) {
            run.error.get_or_insert_with(|| "interrupted".into());
            abort_at = Some(Instant::now());
            aborter.abort();
            let _ = send(&sender, &ToAgent::Abort { reason: "interrupted at the controller".into() });
        }
        if abort_at.is_some_and(|t| t.elapsed() > Duration::from_secs(3)) {
            break;
        }
        let ev = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(ev) => ev,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match ev {
            Event::Local(s) => {
                progress.snapshot(0, &s);
                run.local.snaps.push(*s);
            }
            Event::LocalDone(info) => {
                local_done = true;
                // The askers are done, so the answering end may stop (a UDP or accepting answerer
                // cannot tell on its own). Stream receivers are left to drain to the last byte.
                if plan.rr.is_some() {
                    let _ = send(&sender, &ToAgent::Finish);
                }
                if let Some(e) = &info.error {
                    run.error.get_or_insert_with(|| format!("local end: {e}"));
                }
                run.local.info = *info;
            }
            Event::Remote(Ok(ToController::Snapshot(s))) => {
                progress.snapshot(1, &s);
                run.remote.snaps.push(*s);
            }
            Event::Remote(Ok(ToController::Done(info))) => {
                remote_done = true;
                if plan.rr.is_some() {
                    aborter.finish();
                }
                if let Some(e) = &info.error {
                    run.error.get_or_insert_with(|| format!("agent at {}: {e}", target.name));
                }
                run.remote.info = *info;
            }
            Event::Remote(Ok(ToController::Error { message })) => {
                remote_done = true;
                run.error.get_or_insert_with(|| format!("agent at {}: {message}", target.name));
                aborter.abort();
            }
            Event::Remote(Ok(_)) => {}
            Event::Remote(Err(e)) => {
                remote_done = true;
                if run.error.is_none() {
                    run.error = Some(format!("lost the agent at {}: {e}", target.name));
                }
                aborter.abort();
            }
        }
    }
    progress.finish();
    heartbeat_stop.store(true, Ordering::Relaxed);
    let _ = send(&sender, &ToAgent::Close);
    let _ = stream.shutdown(std::net::Shutdown::Both);
    let _ = heartbeat.join();
    let _ = reader_thread.join();
    aborter.abort();
    let _ = joiner.join();
    Ok(run)
}

type Sender = Arc<std::sync::Mutex<fathom_proto::Connection<std::net::TcpStream>>>;

fn send(sender: &Sender, m: &ToAgent) -> Result<(), String> {
    let mut w = sender.lock().unwrap_or_else(|p| p.into_inner());
    w.send(m).map_err(|e| e.to_string())
}

fn spawn_heartbeat(sender: Sender, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = Instant::now();
            if send(&sender, &ToAgent::Heartbeat).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(800).saturating_sub(now.elapsed()));
        }
    })
}
