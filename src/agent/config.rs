//! An agent's limits and settings, and what an admitted test holds of them: a place among the
//! running tests ([`Slot`]) and its share of the memory budget ([`Reservation`]).

use super::error::Refused;
use super::mesh::MeshShare;
use fathom_engine::kind::Side;
use fathom_engine::measure::host;
use fathom_engine::tls::{Identity, TlsEnd};
use fathom_proto::plan::{Limit, TestPlan};
use fathom_proto::tls::TlsOptions;
use fathom_proto::validate::TEST_MEMORY_BUDGET;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The agent's memory budget for all its tests unless `--max-memory` says otherwise.
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;
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
