//! The forwarder process of one WAN link: `<fathom> lab wan-router --name LAB --link LINK`,
//! started by `lab up` inside the link's router namespace, detached and recorded like an agent.
//!
//! It runs the emulator ([`fathom_wan::Forwarder`]) between the router's two interfaces, answers
//! the control socket (see [`super::control`]), writes its parameters to `wan/<link>.json` after
//! every change, and stops on SIGTERM or SIGINT — or by itself within [`WATCH_EVERY`] once the
//! lab's state is gone or records another forwarder for its link, so a lab that crashed or was
//! removed behind its back never leaves a forwarder running.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fathom_wan::{Direction, Forwarder, LinkParams};

use super::control::{self, Reply, Request, Response};
use super::DirectionParams;
use crate::error::{Error, IoContext, Result};
use crate::state::StateDir;

/// How often the forwarder checks that its lab still wants it.
pub const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How long a control client gets to send its request.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(1);

/// Set by SIGTERM or SIGINT.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Runs the forwarder of WAN link `link` of lab `lab` in the calling process's network
/// namespace (the router's) until told to stop; the final counters go to stdout (its log).
pub fn run(lab: &str, link: &str) -> Result<()> {
    let dir = StateDir::of(lab);
    let state = dir
        .load()?
        .ok_or_else(|| Error::NoSuchLab(lab.to_string()))?;
    let wan = state
        .layout
        .wan(link)
        .ok_or_else(|| Error::NoSuchWan {
            lab: lab.to_string(),
            name: link.to_string(),
            known: super::status::known_names(&state.layout),
        })?
        .spec
        .clone();
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
    let [a, b] = &wan.interfaces;
    let forwarder = Forwarder::start(a, b, wan.a_to_b.clone(), wan.b_to_a.clone())
        .map_err(|e| failed(link, format!("cannot start between {a} and {b}: {e}")))?;
    let socket = dir.wan_socket(&wan.name);
    let _ = std::fs::remove_file(&socket);
    let listener =
        UnixListener::bind(&socket).context(|| format!("listening on {}", socket.display()))?;
    let mut router = Router {
        dir,
        link: wan.name.clone(),
        forwarder,
    };
    router.save_params()?;
    println!(
        "wan-router: link {} forwarding between {a} and {b}: {} -> {} {}, {} -> {} {}; control {}",
        wan.name,
        wan.ends[0],
        wan.ends[1],
        wan.a_to_b.summary(),
        wan.ends[1],
        wan.ends[0],
        wan.b_to_a.summary(),
        socket.display()
    );
    let served = router.serve(&listener);
    let _ = std::fs::remove_file(&socket);
    let counters = router
        .forwarder
        .stop()
        .map_err(|e| failed(link, e.to_string()))?;
    println!(
        "wan-router: stopped; counters {}",
        serde_json::to_string(&counters).expect("counters serialise")
    );
    served
}

fn failed(link: &str, reason: String) -> Error {
    Error::Forwarder {
        link: link.to_string(),
        reason,
    }
}

/// A running forwarder with what it needs to answer requests.
struct Router {
    dir: StateDir,
    link: String,
    forwarder: Forwarder,
}

impl Router {
    /// Answers control requests until a signal arrives or the lab no longer wants us.
    fn serve(&mut self, listener: &UnixListener) -> Result<()> {
        let mut checked = Instant::now();
        while !STOP.load(Ordering::Relaxed) {
            if readable(listener, WATCH_EVERY)? {
                let (stream, _) = listener.accept().context(|| "accepting".to_string())?;
                if let Err(e) = self.answer(stream) {
                    println!("wan-router: control request failed: {e}");
                }
            }
            if checked.elapsed() >= WATCH_EVERY {
                checked = Instant::now();
                if !self.still_wanted() {
                    println!("wan-router: the lab's state is gone or names another forwarder");
                    break;
                }
            }
        }
        Ok(())
    }

    /// Whether the lab's state still exists and records no other process for our link.
    fn still_wanted(&self) -> bool {
        let Ok(Some(state)) = self.dir.load() else {
            return false;
        };
        state.layout.wan(&self.link).is_some_and(|w| {
            w.forwarder
                .as_ref()
                .is_none_or(|f| f.pid == std::process::id())
        })
    }

    /// Reads one request from `stream` and answers it.
    fn answer(&mut self, mut stream: UnixStream) -> io::Result<()> {
        stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
        stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
        let response = match control::receive::<Request>(&mut stream) {
            Ok(request) => self.handle(request),
            Err(e) => Err(format!("bad request: {e}")),
        };
        control::send(&mut stream, &response)
    }

    fn handle(&mut self, request: Request) -> Response {
        if let Request::Set {
            a_to_b,
            b_to_a,
            reset,
        } = request
        {
            let changes = [(Direction::AToB, a_to_b), (Direction::BToA, b_to_a)];
            let mut next = Vec::new();
            for (direction, text) in changes {
                let Some(text) = text else { continue };
                let base = if reset {
                    LinkParams::default()
                } else {
                    self.forwarder.params(direction)
                };
                next.push((direction, base.updated(&text).map_err(|e| e.to_string())?));
            }
            for (direction, params) in next {
                self.forwarder.set_params(direction, params);
            }
            self.save_params().map_err(|e| e.to_string())?;
        }
        Ok(self.reply())
    }

    fn reply(&self) -> Reply {
        Reply {
            a_to_b: self.forwarder.params(Direction::AToB).to_string(),
            b_to_a: self.forwarder.params(Direction::BToA).to_string(),
            counters: self.forwarder.counters(),
        }
    }

    /// Writes the current parameters to `wan/<link>.json` (atomically), for `lab status` to
    /// show even when this process is gone.
    fn save_params(&self) -> Result<()> {
        let file = self.dir.wan_params_file(&self.link);
        let tmp = file.with_extension("json.tmp");
        let reply = self.reply();
        let params = DirectionParams {
            a_to_b: reply.a_to_b,
            b_to_a: reply.b_to_a,
        };
        let json = serde_json::to_vec(&params).expect("parameters serialise");
        std::fs::write(&tmp, json)
            .and_then(|()| std::fs::rename(&tmp, &file))
            .context(|| format!("writing {}", file.display()))
    }
}

/// Waits up to `timeout` for a connection on `listener`; an interrupted wait counts as none.
fn readable(listener: &UnixListener, timeout: Duration) -> Result<bool> {
    let mut fds = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fds` is one valid pollfd that outlives the call.
    let n = unsafe { libc::poll(&mut fds, 1, timeout.as_millis() as libc::c_int) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e).context(|| "waiting for control requests".to_string());
    }
    Ok(n > 0 && fds.revents & libc::POLLIN != 0)
}
