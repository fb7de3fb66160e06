//! iperf3's protocol. `fathom serve --iperf3` answers stock iperf3 clients (3.x), one test at a
//! time as iperf3's server does: the client's receiver figures are fathom's counts, and what
//! fathom measured on its end (bytes, TCP_INFO, CPU) goes to the agent's log. `fathom stream
//! --iperf3` and `fathom udp --iperf3` drive a stock `iperf3 -s` (`client`, `udp_client`).
//!
//! Layers, one per file: `wire` (states, cookie, framed JSON), `params` (the client's options,
//! bounded), `session` (the control state machine, diagrammed there), `stream` and `udp` (the
//! data path), `results` (the result exchange), `log` and `interval` (what the agent's log says),
//! `json` and `json_end` (the client's `-J` document in iperf3's shape).

mod auth;
mod client;
mod client_interval;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod interval;
mod json;
mod json_end;
mod log;
mod params;
mod peer;
mod results;
mod session;
mod store;
mod stream;
mod udp;
mod udp_client;
mod wire;

pub use auth::{password_hash, Auth, AuthFileError, UsersError, DEFAULT_SKEW_S};
pub use client::{run as run_client, Both, Event, Options as ClientOptions, Start};
pub use client_interval::Interval;
pub use error::TestError;
pub use json::{document as json_document, error_document, start as json_start, Intervals, Target};
pub use json_end::end as json_end;
pub use params::{
    Params, MAX_MSS, MAX_OMIT, MAX_PARALLEL, MAX_TCP_LEN, MAX_UDP_LEN, MAX_WINDOW, MIN_UDP_LEN,
};
pub use results::stream_id;
pub use store::client_report;
pub use stream::StreamEnd;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// iperf3's port.
pub const DEFAULT_PORT: u16 = 5201;
/// Connections whose cookie is still awaited; more are closed at once.
const MAX_PENDING: usize = 32;
/// How long a new connection may take to send its cookie.
const COOKIE_WAIT: Duration = Duration::from_secs(3);

/// What the one test slot holds.
pub enum Slot {
    /// No test: the next cookie starts one.
    Idle,
    /// A test runs; new connections are refused with ACCESS_DENIED.
    Busy,
    /// A test waits for its streams: connections with its cookie join it.
    Collecting([u8; wire::COOKIE_LEN], SyncSender<(u64, TcpStream)>),
}

/// The iperf3 listener of an agent.
pub struct Server {
    listener: TcpListener,
    slot: Arc<Mutex<Slot>>,
    pending: Arc<AtomicUsize>,
    max_duration_ns: u64,
    auth: Option<Arc<Auth>>,
    store: Option<Arc<PathBuf>>,
}

impl Server {
    /// Listens on `addr`; tests longer than `max_duration_ns` are refused.
    pub fn bind(addr: SocketAddr, max_duration_ns: u64) -> std::io::Result<Server> {
        Ok(Server {
            listener: TcpListener::bind(addr)?,
            slot: Arc::new(Mutex::new(Slot::Idle)),
            pending: Arc::new(AtomicUsize::new(0)),
            max_duration_ns,
            auth: None,
            store: None,
        })
    }

    /// Saves what fathom measured of each test in the store at `path`.
    pub fn with_store(mut self, path: PathBuf) -> Server {
        self.store = Some(Arc::new(path));
        self
    }

    /// Admits only clients that pass iperf3's RSA authentication against `auth`.
    pub fn with_auth(mut self, auth: Auth) -> Server {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts connections until the process ends.
    pub fn serve(self) {
        let addr = match self.listener.local_addr() {
            Ok(a) => a,
            Err(_) => return,
        };
        let tests = Arc::new(AtomicUsize::new(0));
        // Each connection's place in the accept queue: streams take their roles (forward
        // first, then reverse) in the order the client connected them, not the order in which
        // their cookie-reading threads happen to finish.
        for (seq, conn) in (1u64..).zip(self.listener.incoming()) {
            let Ok(s) = conn else {
                // Out of descriptors or a reset in the backlog: breathe, then go on.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            if matches!(*lock(&self.slot), Slot::Busy) {
                deny(s);
                continue;
            }
            if self.pending.fetch_add(1, Ordering::SeqCst) >= MAX_PENDING {
                self.pending.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            let ctx = session::Ctx {
                addr,
                slot: self.slot.clone(),
                max_duration_ns: self.max_duration_ns,
                auth: self.auth.clone(),
                data: true,
            };
            let (pending, tests) = (self.pending.clone(), tests.clone());
            let store = self.store.clone();
            let spawned = std::thread::Builder::new()
                .name("iperf3-ctl".into())
                .spawn(move || arrive(s, seq, &ctx, (&pending, &tests), store.as_deref()));
            if spawned.is_err() {
                self.pending.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

/// A new connection: its cookie decides whether it is a stream of the test collecting them,
/// the control connection of a new test, or refused.
fn arrive(
    mut s: TcpStream,
    seq: u64,
    ctx: &session::Ctx,
    (pending, tests): (&AtomicUsize, &AtomicUsize),
    store: Option<&PathBuf>,
) {
    let cookie = wire::read_cookie(&mut s, Instant::now() + COOKIE_WAIT);
    pending.fetch_sub(1, Ordering::SeqCst);
    let Ok(cookie) = cookie else { return };
    let mut slot = lock(&ctx.slot);
    match &*slot {
        Slot::Collecting(c, tx) if *c == cookie => {
            let _ = tx.try_send((seq, s));
        }
        Slot::Idle => {
            *slot = Slot::Busy;
            drop(slot);
            let free = Free(&ctx.slot);
            let n = tests.fetch_add(1, Ordering::SeqCst) + 1;
            let peer = s.peer_addr().map_or_else(|_| "?".into(), |a| a.to_string());
            let r = session::run(s, cookie, ctx, n);
            // The next client need not wait for the log and the store.
            drop(free);
            log::outcome(n, &peer, &r);
            if let (Ok(o), Some(path)) = (&r, store) {
                keep(n, path, o, &ctx.addr.to_string(), &peer);
            }
        }
        _ => {
            drop(slot);
            deny(s);
        }
    }
}

/// Saves test `n` in the store at `path`, saying where (or why not) in the log.
fn keep(n: usize, path: &Path, o: &session::Outcome, server: &str, peer: &str) {
    match store::save(path, o, server, peer) {
        Ok(id) => eprintln!(
            "fathom serve: iperf3 test {n} stored as run {id} in {}",
            path.display()
        ),
        Err(e) => eprintln!("fathom serve: warning: iperf3 test {n} was not stored: {e}"),
    }
}

/// Sets the slot to collect `n` streams with `cookie`; returns where they arrive, each with its
/// place in the accept queue.
fn collect(
    slot: &Mutex<Slot>,
    cookie: [u8; wire::COOKIE_LEN],
    n: usize,
) -> Receiver<(u64, TcpStream)> {
    let (tx, rx) = sync_channel(n);
    *lock(slot) = Slot::Collecting(cookie, tx);
    rx
}

/// Sets the slot back to busy once the streams are in.
fn hold(slot: &Mutex<Slot>) {
    *lock(slot) = Slot::Busy;
}

/// Frees the slot when a test ends, however it ends.
struct Free<'a>(&'a Mutex<Slot>);

impl Drop for Free<'_> {
    fn drop(&mut self) {
        *lock(self.0) = Slot::Idle;
    }
}

/// Tells a connection the server is busy, without reading from it, as iperf3 does.
fn deny(mut s: TcpStream) {
    let _ = s.set_nonblocking(true);
    let _ = s.write_all(&[wire::State::AccessDenied as i8 as u8]);
}

fn lock(m: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
