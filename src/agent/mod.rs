//! The agent (`fathom serve`): accepts control connections and runs each test in its own
//! session, isolated from the others, within per-test limits.

mod data;
#[doc(hidden)]
pub mod fuzz;
mod session;
mod stream;

use fathom_proto::plan::{Limit, TestPlan};
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
    /// Log one line per test to stderr.
    pub log: bool,
    /// Test-only: pretend this agent's clock runs this far ahead (ns), to check that the
    /// controller's clock-offset estimate lines hosts up.
    pub clock_shift_ns: i64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            key: None,
            max_duration_ns: 3600 * 1_000_000_000,
            max_flows: 20_000,
            max_tests: 64,
            log: false,
            clock_shift_ns: 0,
        }
    }
}

impl AgentConfig {
    /// Checks a plan against the limits; the error is sent to the controller verbatim.
    pub fn admit(&self, plan: &TestPlan) -> Result<(), String> {
        if plan.flows.is_empty() {
            return Err("the test has no flows".into());
        }
        if plan.flows.len() > self.max_flows as usize {
            return Err(format!(
                "the test asks for {} connections; this agent allows {} (--max-flows)",
                plan.flows.len(),
                self.max_flows
            ));
        }
        if let Limit::Time { duration_ns } = plan.limit {
            if plan.omit_ns.saturating_add(duration_ns) > self.max_duration_ns {
                return Err(format!(
                    "the test would run {} s; this agent allows {} s (--max-duration)",
                    (plan.omit_ns + duration_ns) / 1_000_000_000,
                    self.max_duration_ns / 1_000_000_000
                ));
            }
        }
        const MAX_IO: u32 = 64 << 20;
        if plan.write_size == 0 || plan.write_size > MAX_IO || plan.read_size > MAX_IO {
            return Err(format!(
                "write and read sizes must be at most {} MB (and writes at least 1 byte)",
                MAX_IO >> 20
            ));
        }
        if plan.interval_ns < 10_000_000 {
            return Err("the interval must be at least 10 ms".into());
        }
        Ok(())
    }
}

/// A bound agent.
pub struct Agent {
    listener: TcpListener,
    cfg: Arc<AgentConfig>,
    active: Arc<AtomicUsize>,
}

impl Agent {
    /// Binds the control port.
    pub fn bind(addr: SocketAddr, cfg: AgentConfig) -> io::Result<Agent> {
        Ok(Agent {
            listener: TcpListener::bind(addr)?,
            cfg: Arc::new(cfg),
            active: Arc::new(AtomicUsize::new(0)),
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

    /// Serves forever, one thread per control connection.
    pub fn serve(self) -> io::Result<()> {
        let mut next_id = 1u64;
        loop {
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if is_transient(&e) => continue,
                Err(e) => return Err(e),
            };
            let (cfg, active, id) = (self.cfg.clone(), self.active.clone(), next_id);
            next_id += 1;
            let over = active.fetch_add(1, Ordering::SeqCst) >= cfg.max_tests;
            let spawned = std::thread::Builder::new()
                .name(format!("fathom-test{id}"))
                .spawn(move || {
                    session::run(stream, peer, &cfg, id, over);
                    active.fetch_sub(1, Ordering::SeqCst);
                });
            if let Err(e) = spawned {
                self.active.fetch_sub(1, Ordering::SeqCst);
                if self.cfg.log {
                    eprintln!("fathom serve: cannot start a session for {peer}: {e}");
                }
            }
        }
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

/// Errors of accept() that concern one connection, not the listener.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::ECONNABORTED
                | libc::EINTR
                | libc::EMFILE
                | libc::ENFILE
                | libc::ENOBUFS
                | libc::ENOMEM
                | libc::EPROTO
        )
    )
}
