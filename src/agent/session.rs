//! One control connection of the agent: handshake, authentication, then one test driven by
//! the controller's messages. The session owns everything the test allocates and frees it when
//! the test ends, the controller closes, or the controller falls silent.

use super::config::{AgentConfig, Slot};
use super::error::{AgentError, Refusal};
use super::event::Event;
use super::handshake::{left_early, Deadline, Pass, HANDSHAKE};
use super::stream::ControlStream;
use super::test::Test;
use fathom_engine::{clock, measure::host};
use fathom_proto::{
    auth, Connection, FrameError, Preamble, PreambleKind, ToAgent, ToController, MAX_FRAME,
    PRE_AUTH_FRAME, SETTINGS_MAX,
};
use std::io::Write;
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A controller that sends nothing for this long is gone (it heartbeats every second); so is
/// one that reads nothing of this end's replies for this long.
const SILENCE: Duration = Duration::from_secs(3);
/// Most controller messages read ahead of the session; then the reader waits (and the
/// controller's writes with it), so a controller cannot queue without bound.
const CTRL_QUEUE: usize = 64;

/// Runs one session to its end, logging its outcome when configured to. The `handshake` pass
/// is given back once the handshake ends; an authenticated session then takes one of `tests`.
pub fn run<S: ControlStream>(
    stream: S,
    peer: SocketAddr,
    cfg: &AgentConfig,
    id: u64,
    handshake: Pass,
    tests: &Arc<AtomicUsize>,
) {
    let shook = Session::handshake(stream, cfg, tests);
    drop(handshake);
    let r = match shook {
        Ok(Some(s)) => s.serve(cfg),
        Ok(None) => return,
        Err(e) => Err(e),
    };
    if cfg.log {
        match r {
            Ok(Some(what)) => eprintln!("fathom serve: test {id} from {peer}: {what}"),
            Ok(None) => {}
            Err(e) => eprintln!("fathom serve: test {id} from {peer}: {e}"),
        }
    }
}

struct Session<S> {
    stream: S,
    conn: Connection<S>,
    /// This session's place among the agent's `--max-tests`.
    _slot: Slot,
    /// The controller stopped reading: a write timed out.
    deaf: bool,
    /// A mesh's booking or reading, not worth a log line when it ends well (a mesh books
    /// several slots a second).
    quiet: bool,
}

/// The session's events, with the controller's messages bounded: each one read takes a permit
/// that is given back when the session takes the message.
struct Inbox {
    events: mpsc::Receiver<Event>,
    permits: mpsc::Receiver<()>,
}

impl Inbox {
    fn next(&self, wait: Duration) -> Result<Event, mpsc::RecvTimeoutError> {
        let ev = self.events.recv_timeout(wait)?;
        if matches!(ev, Event::Ctrl(_)) {
            let _ = self.permits.try_recv();
        }
        Ok(ev)
    }
}

impl<S: ControlStream> Session<S> {
    /// The handshake, within one deadline; `Ok(None)` when the peer left before its preamble
    /// (a readiness probe), which is not worth a log line.
    fn handshake(
        stream: S,
        cfg: &AgentConfig,
        tests: &Arc<AtomicUsize>,
    ) -> Result<Option<Session<S>>, AgentError> {
        let _ = stream.set_nodelay(true);
        stream.set_write_timeout(Some(SILENCE))?;
        let handshake_stream = stream.try_clone()?;
        let mut ctl = Deadline::new(handshake_stream, Instant::now() + HANDSHAKE);
        let theirs = match Preamble::read_from(&mut ctl) {
            Err(e) if left_early(&e) => return Ok(None),
            r => r.map_err(refused)?,
        };
        ctl.write_all(&Preamble::ours(PreambleKind::Control).encode())?;
        theirs.check_version().map_err(refused)?;
        let mut conn = Connection::new(ctl);
        let refuse = |conn: &mut Connection<Deadline<S>>, why: Refusal| {
            let _ = conn.send(&ToController::Error {
                message: why.to_string(),
            });
            AgentError::Refused(why)
        };
        if theirs.kind != PreambleKind::Control {
            return Err(refuse(&mut conn, Refusal::DataOnControl));
        }
        let nonce = auth::nonce();
        conn.send(&ToController::Challenge {
            nonce,
            key_required: cfg.key.is_some(),
        })?;
        match conn.expect::<ToAgent>(PRE_AUTH_FRAME) {
            Ok(ToAgent::Auth { mac }) => {
                if let Some(key) = &cfg.key {
                    if !mac.is_some_and(|m| auth::verify(key, &nonce, &m)) {
                        let what = if mac.is_some() {
                            "wrong key"
                        } else {
                            "this agent requires a key (--key-file)"
                        };
                        return Err(refuse(&mut conn, Refusal::Auth(what)));
                    }
                }
            }
            Ok(other) => return Err(refuse(&mut conn, Refusal::NotAuth(name(&other)))),
            Err(e) => return Err(refuse(&mut conn, Refusal::NoAuth(e))),
        }
        let Some(slot) = Slot::take(tests, cfg.max_tests) else {
            return Err(refuse(&mut conn, Refusal::Full));
        };
        cfg.served
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        conn.send(&ToController::Welcome(host::host_info()))?;
        let conn = Connection::new(stream.try_clone()?);
        Ok(Some(Session {
            stream,
            conn,
            _slot: slot,
            deaf: false,
            quiet: false,
        }))
    }

    /// Serves the session to its end: its summary, or none for a mesh's booking or reading
    /// that went well.
    fn serve(mut self, cfg: &AgentConfig) -> Result<Option<String>, AgentError> {
        let (tx, events) = mpsc::channel();
        let (permit, permits) = mpsc::sync_channel(CTRL_QUEUE);
        self.stream.set_read_timeout(Some(SILENCE))?;
        let reader_stream = self.stream.try_clone()?;
        let reader_tx = tx.clone();
        let reader = std::thread::spawn(move || {
            let mut rc = Connection::new(reader_stream);
            // Fails once the session is over, which also wakes a reader waiting here.
            while permit.send(()).is_ok() {
                let m = rc.recv::<ToAgent>(MAX_FRAME);
                let end = !matches!(m, Ok(Some(_)));
                if reader_tx.send(Event::Ctrl(m)).is_err() || end {
                    break;
                }
            }
        });
        let inbox = Inbox { events, permits };
        let mut test = Test::default();
        let outcome = self.drive(cfg, &tx, &inbox, &mut test);
        test.teardown();
        match &outcome {
            Err(e) if !self.deaf => {
                let _ = self.conn.send(&ToController::Error {
                    message: e.to_string(),
                });
            }
            _ => {}
        }
        let _ = self.stream.shutdown(Shutdown::Both);
        drop(inbox);
        let _ = reader.join();
        outcome.map(|summary| (!self.quiet).then_some(summary))
    }

    fn send(&mut self, m: &ToController) -> Result<(), AgentError> {
        match self.conn.send(m) {
            Err(FrameError::Io(e)) if is_timeout(&e) => {
                self.deaf = true;
                Err(AgentError::Deaf(SILENCE.as_secs()))
            }
            r => r.map_err(AgentError::Unreachable),
        }
    }

    fn drive(
        &mut self,
        cfg: &AgentConfig,
        tx: &mpsc::Sender<Event>,
        inbox: &Inbox,
        test: &mut Test,
    ) -> Result<String, AgentError> {
        loop {
            let wait = test.deadline.map_or(Duration::from_secs(3600), |d| {
                d.saturating_duration_since(Instant::now())
            });
            let ev = match inbox.next(wait) {
                Ok(ev) => ev,
                Err(_) => {
                    test.abort();
                    return Err(AgentError::Overran);
                }
            };
            match ev {
                Event::Ctrl(Ok(Some(msg))) => {
                    if let Some(summary) = self.on_message(msg, cfg, tx, test)? {
                        return Ok(summary);
                    }
                }
                Event::Ctrl(Ok(None)) => {
                    test.abort();
                    return Ok(format!(
                        "{}; the controller closed the connection",
                        test.summary()
                    ));
                }
                Event::Ctrl(Err(FrameError::Io(e))) if is_timeout(&e) => {
                    test.abort();
                    return Err(AgentError::Silent(SILENCE.as_secs()));
                }
                Event::Ctrl(Err(FrameError::Io(e))) => {
                    test.abort();
                    return Ok(format!("{}; control connection lost: {e}", test.summary()));
                }
                Event::Ctrl(Err(e)) => {
                    test.abort();
                    return Err(e.into());
                }
                Event::Flow(Ok(arrival)) => {
                    if let Some(infos) = test.arrived(*arrival)? {
                        self.send(&ToController::Connected(infos))?;
                    }
                }
                Event::Flow(Err(e)) => return Err(e),
                Event::Snap(s) => self.send(&ToController::Snapshot(s))?,
                Event::Done(info) => {
                    test.finished = true;
                    self.send(&ToController::Done(info))?;
                }
            }
        }
    }

    /// Acts on one controller message; the session's summary once the controller closes it.
    fn on_message(
        &mut self,
        msg: ToAgent,
        cfg: &AgentConfig,
        tx: &mpsc::Sender<Event>,
        test: &mut Test,
    ) -> Result<Option<String>, AgentError> {
        match msg {
            ToAgent::TimeProbe { t1 } => {
                let shifted = || clock::now_ns().wrapping_add_signed(cfg.clock_shift_ns);
                let t2 = shifted();
                self.send(&ToController::TimeReply {
                    t1,
                    t2,
                    t3: shifted(),
                })?;
            }
            ToAgent::Join(j) => {
                let infos = test.join(*j, cfg)?;
                self.send(&ToController::Connected(infos))?;
            }
            ToAgent::Setup(plan) => {
                let ip = self.stream.local_addr()?.ip();
                for m in test.setup(*plan, cfg, ip, tx)? {
                    self.send(&m)?;
                }
            }
            ToAgent::Finish => test.finish(),
            ToAgent::Start { t0 } => {
                test.start(t0.wrapping_add_signed(-cfg.clock_shift_ns), cfg, tx)?
            }
            ToAgent::Heartbeat => {}
            ToAgent::Abort { reason } => {
                test.abort();
                test.aborted = Some(reason);
            }
            ToAgent::Close => return Ok(Some(test.summary())),
            ToAgent::Settings => self.send(&ToController::Settings(settings_report()?))?,
            ToAgent::Book(b) => {
                self.quiet = true;
                self.send(&cfg.mesh.book(&b))?
            }
            ToAgent::Release { id } => {
                self.quiet = true;
                self.send(&cfg.mesh.release(id))?
            }
            ToAgent::MeshResults => {
                self.quiet = true;
                self.send(&cfg.mesh.results())?
            }
            other => return Err(AgentError::Unexpected(name(&other))),
        }
        Ok(None)
    }
}

/// The handshake's refusal of a preamble or a protocol version.
fn refused(e: FrameError) -> AgentError {
    AgentError::Refused(Refusal::Preamble(e))
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn name(m: &ToAgent) -> &'static str {
    match m {
        ToAgent::Auth { .. } => "Auth",
        ToAgent::TimeProbe { .. } => "TimeProbe",
        ToAgent::Setup(_) => "Setup",
        ToAgent::Join(_) => "Join",
        ToAgent::Start { .. } => "Start",
        ToAgent::Heartbeat => "Heartbeat",
        ToAgent::Finish => "Finish",
        ToAgent::Abort { .. } => "Abort",
        ToAgent::Close => "Close",
        ToAgent::Settings => "Settings",
        ToAgent::Book(_) => "Book",
        ToAgent::Release { .. } => "Release",
        ToAgent::MeshResults => "MeshResults",
    }
}

/// This host's settings as the advisor reads them (every interface but loopback, and this
/// process's open-files limit), as the wire carries them.
fn settings_report() -> Result<String, AgentError> {
    let limit = crate::fdlimit::Limit::now();
    let s = fathom_advisor::read::host(None, Some((limit.soft, limit.hard)));
    let json = fathom_advisor::wire::encode(&s);
    match json.len() <= SETTINGS_MAX {
        true => Ok(json),
        false => Err(AgentError::SettingsTooLarge(json.len())),
    }
}
