//! The agent (`fathom serve`): accepts control connections and runs each test in its own
//! session, isolated from the others, within per-test limits.
//!
//! What a stranger can hold is bounded: at most [`MAX_HANDSHAKES`] connections are in the
//! handshake at once (a new one cuts off the oldest), each for at most 10 s in all, and the
//! agent reads only small frames from them until they authenticate; only an authenticated
//! connection takes one of the `--max-tests` slots. When descriptors run out, accept() backs
//! off and a reserve descriptor lets it shed the waiting connection instead of spinning.

mod arrival;
mod config;
mod data;
mod error;
mod event;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
mod handshake;
mod mesh;
mod session;
mod stream;
mod test;

pub use config::{AgentConfig, Reservation, Slot, DEFAULT_MAX_MEMORY};
pub use error::{AgentError, ArrivalError, Refusal, Refused};
pub use handshake::MAX_HANDSHAKES;
pub use mesh::{MeshShare, Results};

use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

/// How long accept() rests after a failure that could repeat at once (no descriptors, no memory).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A bound agent.
pub struct Agent {
    listener: TcpListener,
    cfg: Arc<AgentConfig>,
    active: Arc<AtomicUsize>,
    handshakes: Arc<handshake::Handshakes>,
}

impl Agent {
    /// Binds the control port.
    pub fn bind(addr: SocketAddr, cfg: AgentConfig) -> io::Result<Agent> {
        Ok(Agent {
            listener: TcpListener::bind(addr)?,
            cfg: Arc::new(cfg),
            active: Arc::default(),
            handshakes: Arc::default(),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A counter of the tests running now.
    pub fn active(&self) -> Arc<AtomicUsize> {
        self.active.clone()
    }

    /// The counts `--metrics` exports: tests running, served, and the memory they reserved.
    pub fn counts(&self) -> fathom_metrics::AgentCounts {
        fathom_metrics::AgentCounts {
            running: self.active.clone(),
            served: self.cfg.served.clone(),
            memory_reserved: self.cfg.memory_in_use.clone(),
        }
    }

    /// Serves forever, one thread per control connection.
    pub fn serve(self) -> io::Result<()> {
        let mut next_id = 1u64;
        // Kept open so that, out of descriptors, the agent can still accept and close.
        let mut reserve = File::open("/dev/null").ok();
        loop {
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if out_of_descriptors(&e) => {
                    self.shed(&mut reserve);
                    continue;
                }
                Err(e) if is_transient(&e) => {
                    std::thread::sleep(ACCEPT_BACKOFF / 5);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let (cfg, tests, id) = (self.cfg.clone(), self.active.clone(), next_id);
            next_id += 1;
            let Ok(handshake) = handshake::Handshakes::enter(&self.handshakes, id, &stream) else {
                continue;
            };
            let spawned = std::thread::Builder::new()
                .name(format!("fathom-test{id}"))
                .spawn(move || session::run(stream, peer, &cfg, id, handshake, &tests));
            if let Err(e) = spawned {
                if self.cfg.log {
                    eprintln!("fathom serve: cannot start a session for {peer}: {e}");
                }
                std::thread::sleep(ACCEPT_BACKOFF);
            }
        }
    }

    /// Out of descriptors: gives up the reserve to accept and close the waiting connection (so
    /// it is not retried at once, forever), rests, and takes the reserve back. The accept does
    /// not wait: with no connection waiting any more, the next one must get its chance.
    fn shed(&self, reserve: &mut Option<File>) {
        drop(reserve.take());
        if self.listener.set_nonblocking(true).is_ok() {
            drop(self.listener.accept());
            let _ = self.listener.set_nonblocking(false);
        }
        std::thread::sleep(ACCEPT_BACKOFF);
        *reserve = File::open("/dev/null").ok();
    }

    /// Serves on a background thread (the embedded agent).
    pub fn spawn(self) -> io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("fathom-agent".into())
            .spawn(move || {
                let _ = self.serve();
            })
    }
}

/// accept() failed for want of descriptors, in this process or in the system.
fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Errors of accept() that concern one connection or a passing shortage, not the listener.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::EINTR | libc::ENOBUFS | libc::ENOMEM | libc::EPROTO)
    )
}
