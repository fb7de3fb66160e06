//! The agent (`fathom serve`): accepts control connections and runs each test in its own
//! session, isolated from the others, within per-test limits.
//!
//! What a stranger can hold is bounded: at most [`MAX_HANDSHAKES`] connections are in the
//! handshake at once (a new one cuts off the oldest), each for at most 10 s in all, and the
//! agent reads only small frames from them until they authenticate; only an authenticated
//! connection takes one of the `--max-tests` slots. When descriptors run out, accept() backs
//! off and a reserve descriptor lets it shed the waiting connection instead of spinning.

mod arrival;
mod data;
mod error;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
mod handshake;
mod mesh;
mod session;
mod stream;
mod test;

pub use error::{AgentError, ArrivalError, Refusal, Refused};
pub use handshake::MAX_HANDSHAKES;
pub use mesh::{MeshShare, Results};

use fathom_engine::kind::Side;
use fathom_engine::measure::host;
use fathom_engine::tls::{Identity, TlsEnd};
use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::tls::TlsOptions;
use fathom_proto::validate::TEST_MEMORY_BUDGET;
use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The agent's memory budget for all its tests unless `--max-memory` says otherwise.
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;
/// How long accept() rests after a failure that could repeat at once (no descriptors, no memory).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Limits and settings of an agent.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// Pre-shared key; controllers must prove they hold it.
    pub key: Option<Vec<u8>>,
    /// Longest test accepted (warm-up + window), and the hard stop for counted tests, ns.
    pub max_duration_ns: u64,
    /// Most data connections per test.
    pub max_flows: u32,
    /// Most tests at once.
    pub max_tests: usize,
    /// Most memory all running tests may need together, by their plans' estimates (bytes).
    pub max_memory: u64,
    /// Log one line per test to stderr.
    pub log: bool,
    /// Test-only: pretend this agent's clock runs this far ahead (ns), to check that the
    /// controller's clock-offset estimate lines hosts up.
    pub clock_shift_ns: i64,
    /// The directory file copies read and write below (`--files-root`, canonical); none: the
    /// agent refuses file copies.
    pub files_root: Option<std::path::PathBuf>,
    /// Memory the admitted tests hold now (bytes), shared by every session of the agent and
    /// by clones of this configuration; start it at zero (the default).
    pub memory_in_use: Arc<AtomicU64>,
    /// Tests admitted since the agent started (authenticated, given a slot), shared like
    /// `memory_in_use`; start it at zero (the default).
    pub served: Arc<AtomicU64>,
    /// The certificate and key TLS tests' data ports present: the one `--cert/--key` name,
    /// else a self-signed one made at the start (or, left empty, at the first TLS test).
    pub identity: Arc<OnceLock<Identity>>,
    /// Its slot table for mesh tests, and the results of the mesh it runs (`serve --mesh`).
    pub mesh: Arc<MeshShare>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            key: None,
            max_duration_ns: 3600 * 1_000_000_000,
            max_flows: 20_000,
            max_tests: 64,
            max_memory: DEFAULT_MAX_MEMORY,
            log: false,
            clock_shift_ns: 0,
            files_root: None,
            memory_in_use: Arc::default(),
            served: Arc::default(),
            identity: Arc::default(),
            mesh: Arc::default(),
        }
    }
}

/// Memory reserved for one admitted test, given back when it is dropped.
#[derive(Debug)]
pub struct Reservation {
    bytes: u64,
    pool: Arc<AtomicU64>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.pool.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

impl AgentConfig {
    /// This end of a TLS test with `opts`: the agent's certificate, made now if it has none.
    pub fn tls_server(&self, opts: &TlsOptions) -> Result<TlsEnd, Refused> {
        if self.identity.get().is_none() {
            let _ = self.identity.set(Identity::generate()?);
        }
        let id = self.identity.get().ok_or(Refused::NoCertificate)?;
        Ok(TlsEnd::server(id, opts)?)
    }

    /// Checks a plan against its bounds and this agent's limits, for this agent's end (`end`,
    /// running `flows` of the plan's flows), and reserves the memory it needs. The error is sent
    /// to the controller verbatim.
    pub fn admit(&self, plan: &TestPlan, end: Side, flows: usize) -> Result<Reservation, Refused> {
        plan.validate().map_err(Refused::Bounds)?;
        let side = match end {
            Side::Client => &plan.client,
            Side::Server => &plan.server,
        };
        let mine = fathom_engine::spin::End {
            label: "this agent's",
            side: end,
        };
        if let Some(why) = fathom_engine::spin::clash(plan, &[mine]) {
            return Err(Refused::Spinning(why));
        }
        let placed = side.affinity.iter().chain(&side.cpu_set).flatten();
        if let Some((cpu, usable)) =
            fathom_engine::clock::unusable_cpu(&placed.copied().collect::<Vec<_>>())
        {
            return Err(Refused::Cpu { cpu, usable });
        }
        if plan.flows.len() > self.max_flows as usize {
            return Err(Refused::Flows {
                asks: plan.flows.len(),
                allows: self.max_flows,
            });
        }
        if let Limit::Time { duration_ns } = plan.limit {
            let total = plan.omit_ns.saturating_add(duration_ns);
            if total > self.max_duration_ns {
                return Err(Refused::Duration {
                    secs: total / 1_000_000_000,
                    allows: self.max_duration_ns / 1_000_000_000,
                });
            }
        }
        self.reserve(plan.memory_estimate(side, flows, host::online_cpus()))
    }

    /// Reserves `bytes` of the per-test budget and of `--max-memory`.
    fn reserve(&self, bytes: u64) -> Result<Reservation, Refused> {
        let mb = |b: u64| b.div_ceil(1 << 20);
        let per_test = TEST_MEMORY_BUDGET.min(self.max_memory);
        if bytes > per_test {
            return Err(Refused::Memory {
                need_mb: mb(bytes),
                per_test_mb: mb(per_test),
                max_mb: mb(self.max_memory),
            });
        }
        let pool = &self.memory_in_use;
        pool.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
            used.checked_add(bytes).filter(|t| *t <= self.max_memory)
        })
        .map_err(|used| Refused::Busy {
            need_mb: mb(bytes),
            held_mb: mb(used),
            max_mb: mb(self.max_memory),
        })?;
        Ok(Reservation {
            bytes,
            pool: pool.clone(),
        })
    }
}

/// One of a bounded number of places (a running test), given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// Takes a place from `count` if fewer than `max` are taken.
    pub fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(count.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

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
