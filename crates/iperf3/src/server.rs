//! The iperf3 listener of an agent: it accepts connections, reads each one's cookie, and
//! either starts a test (`session`), hands the connection to the test collecting its streams,
//! or refuses it while a test runs, as iperf3's server does. Once a test ends, its outcome goes
//! to the log and, with a store, into it.

use super::auth::Auth;
use super::slot::{lock, Free, Slot};
use super::{log, session, store, wire};
use serde_json::Value;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// iperf3's port.
pub const DEFAULT_PORT: u16 = 5201;
/// Connections whose cookie is still awaited; more are closed at once.
const MAX_PENDING: usize = 32;
/// How long a new connection may take to send its cookie.
const COOKIE_WAIT: Duration = Duration::from_secs(3);

/// The iperf3 listener of an agent.
pub struct Server {
    listener: TcpListener,
    slot: Arc<Mutex<Slot>>,
    pending: Arc<AtomicUsize>,
    max_duration_ns: u64,
    auth: Option<Arc<Auth>>,
    store: Option<Arc<Keep>>,
}

/// Where tests are saved, and how the host's environment kept with each is collected.
struct Keep {
    path: PathBuf,
    env: fn() -> Value,
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

    /// Saves what fathom measured of each test in the store at `path`, with the host's
    /// environment as `env` collects it when the test is saved.
    pub fn with_store(mut self, path: PathBuf, env: fn() -> Value) -> Server {
        self.store = Some(Arc::new(Keep { path, env }));
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
    store: Option<&Keep>,
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
            if let (Ok(o), Some(k)) = (&r, store) {
                keep(n, k, o, &ctx.addr.to_string(), &peer);
            }
        }
        _ => {
            drop(slot);
            deny(s);
        }
    }
}

/// Saves test `n` in the store, saying where (or why not) in the log.
fn keep(n: usize, k: &Keep, o: &session::Outcome, server: &str, peer: &str) {
    match store::save(&k.path, &(k.env)(), o, server, peer) {
        Ok(id) => eprintln!(
            "fathom serve: iperf3 test {n} stored as run {id} in {}",
            k.path.display()
        ),
        Err(e) => eprintln!("fathom serve: warning: iperf3 test {n} was not stored: {e}"),
    }
}

/// Tells a connection the server is busy, without reading from it, as iperf3 does.
fn deny(mut s: TcpStream) {
    let _ = s.set_nonblocking(true);
    let _ = s.write_all(&[wire::State::AccessDenied as i8 as u8]);
}
