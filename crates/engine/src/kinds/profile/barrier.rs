//! Barriers between transactions: a flow that ends a transaction marked `barrier` waits until
//! every flow taking part in that barrier has ended it too. The k-th barrier of one program
//! meets the k-th barrier of every other program sharing the [`SharedBarriers`]: within one
//! test, every flow of the connecting end; across a profile's groups (tests of their own run
//! from one process), every flow of every group that has a k-th barrier. A flow that fails
//! breaks every barrier, so the others stop with an error instead of waiting for it forever;
//! a barrier that stays shut past its budget ([`SharedBarriers::budget_ns`]) fails the flows
//! waiting at it.
//!
//! The agent's mirror waits too: a flow whose connection is open at a barrier sends one
//! [`GO`] byte on it once the barrier opened (a [`Waiter`]), and the mirror, at the same
//! place in its program, reads that byte before it goes on ([`read_go`]). A flow whose
//! connection is closed there sends nothing: its mirror's next step is to take the flow's
//! next connection, which opens only after the barrier. The go byte is not payload: neither
//! end counts it.

use crate::clock;
use crate::tls::Wire;
use fathom_proto::profile::{Op, Program, Repeat, Transaction};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// How often a waiting flow looks again (ns).
const BARRIER_POLL_NS: u64 = 1_000_000;
/// What a barrier's budget allows beyond the think times, rates and durations before it:
/// connections opening and data moving (ns).
const BARRIER_GRACE_NS: u64 = 120_000_000_000;
/// The byte that tells a mirror its barrier opened.
pub(super) const GO: u8 = 0x67;

/// Barriers met by the flows of several programs (a profile's groups), by order: the k-th
/// barrier opens once every flow of every program that has a k-th barrier reached it.
#[derive(Debug)]
pub struct SharedBarriers {
    expected: Vec<u32>,
    arrived: Vec<AtomicU32>,
    /// Per barrier, how long a flow may wait at it (ns).
    budget: Vec<u64>,
    broken: AtomicBool,
}

impl SharedBarriers {
    /// Barriers for `groups`, each `(flows, program)`: that many flows run that program.
    pub fn new<'a>(groups: impl IntoIterator<Item = (u32, &'a Program)>) -> SharedBarriers {
        let mut expected: Vec<u32> = Vec::new();
        let mut budget: Vec<u64> = Vec::new();
        for (flows, program) in groups {
            let lead = lead_times(program);
            if expected.len() < lead.len() {
                expected.resize(lead.len(), 0);
                budget.resize(lead.len(), BARRIER_GRACE_NS);
            }
            for (k, l) in lead.iter().enumerate() {
                expected[k] = expected[k].saturating_add(flows);
                budget[k] = budget[k].max(BARRIER_GRACE_NS.saturating_add(*l));
            }
        }
        SharedBarriers {
            arrived: expected.iter().map(|_| AtomicU32::new(0)).collect(),
            expected,
            budget,
            broken: AtomicBool::new(false),
        }
    }

    /// How long a flow may wait at the k-th barrier before it fails: the longest any program
    /// takes to get there by its think times, rates and durations, and [`BARRIER_GRACE_NS`].
    pub fn budget_ns(&self, k: usize) -> u64 {
        self.budget.get(k).copied().unwrap_or(BARRIER_GRACE_NS)
    }

    /// A flow failed, or a group's test could not run: nobody waits for it.
    pub fn break_all(&self) {
        self.broken.store(true, Ordering::Release);
    }
}

/// Per barrier of `program`, in order, the least time its flows take to get there by the
/// think times, rates and durations of the transactions up to it, generously (ns, saturating).
fn lead_times(program: &Program) -> Vec<u64> {
    let mut at = 0u64;
    let mut lead = Vec::new();
    for t in &program.transactions {
        at = at.saturating_add(spent_ns(t));
        if t.barrier {
            lead.push(at);
        }
    }
    lead
}

/// The time transaction `t` takes by its duration, rate and think times alone (ns).
fn spent_ns(t: &Transaction) -> u64 {
    let n = match t.repeat {
        Repeat::Iterations(n) => n,
        Repeat::DurationMs(ms) => return ms.saturating_mul(1_000_000),
    };
    let thinks: u64 = t
        .ops
        .iter()
        .filter_map(|f| match &f.op {
            Op::Think(s) => Some(
                u64::from(s.max())
                    .saturating_mul(1_000)
                    .saturating_mul(u64::from(f.count.max(1))),
            ),
            _ => None,
        })
        .fold(0, u64::saturating_add);
    let paced = t.rate.map_or(0, |r| 1_000_000_000 / u64::from(r.max(1)));
    n.saturating_mul(thinks.saturating_add(paced))
}

/// One program's view of its [`SharedBarriers`]: its transactions mapped to barrier order.
pub(super) struct Barriers {
    /// Per transaction, its place among the program's barriers (none: not a barrier).
    order: Vec<Option<usize>>,
    shared: Arc<SharedBarriers>,
}

impl Barriers {
    /// The barriers of `program`, met as `shared` keeps them.
    pub(super) fn new(program: &Program, shared: Arc<SharedBarriers>) -> Barriers {
        let mut k = 0;
        let order = program
            .transactions
            .iter()
            .map(|t| {
                t.barrier.then(|| {
                    k += 1;
                    k - 1
                })
            })
            .collect();
        Barriers { order, shared }
    }

    fn slot(&self, tx: usize) -> Option<(&AtomicU32, u32)> {
        let k = (*self.order.get(tx)?)?;
        Some((self.shared.arrived.get(k)?, *self.shared.expected.get(k)?))
    }

    /// One flow reached the end of transaction `tx`.
    pub(super) fn arrive(&self, tx: usize) {
        if let Some((a, _)) = self.slot(tx) {
            a.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Whether every flow reached the end of transaction `tx`; an error once a flow failed.
    pub(super) fn all_here(&self, tx: usize) -> io::Result<bool> {
        if self.shared.broken.load(Ordering::Acquire) {
            return Err(io::Error::other(
                "another flow failed before a barrier every flow waits at",
            ));
        }
        Ok(self
            .slot(tx)
            .is_none_or(|(a, n)| a.load(Ordering::Acquire) >= n))
    }

    /// How long a flow may wait at the end of transaction `tx` (ns).
    fn budget_ns(&self, tx: usize) -> u64 {
        let k = self.order.get(tx).copied().flatten().unwrap_or(usize::MAX);
        self.shared.budget_ns(k)
    }

    /// A flow failed: nobody waits for it.
    pub(super) fn break_all(&self) {
        self.shared.break_all();
    }
}

/// What a flow at a barrier does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Meet {
    /// The barrier opened and the mirror was told: the program goes on.
    Passed,
    /// Wait: on the socket's readiness (none), or until this instant.
    Wait(Option<u64>),
}

/// One flow's way through its barriers on the connecting end: it arrives once, waits (within
/// the barrier's budget) until every flow did, then sends its mirror the [`GO`] byte.
pub(super) struct Waiter {
    barriers: Arc<Barriers>,
    /// The barrier (its transaction) it arrived at, and when.
    at: Option<(usize, u64)>,
    /// The go byte for that barrier is written (with TLS, its record may still be queued).
    written: bool,
}

impl Waiter {
    /// A flow's waiter at `barriers`.
    pub(super) fn new(barriers: Arc<Barriers>) -> Waiter {
        Waiter {
            barriers,
            at: None,
            written: false,
        }
    }

    /// The flow ended transaction `tx`, a barrier, with `wire` open (or none): passed, or
    /// wait; an error once another flow failed or the barrier stayed shut past its budget.
    pub(super) fn meet(&mut self, tx: usize, wire: Option<&mut Wire>) -> io::Result<Meet> {
        let now = clock::now_ns();
        let since = match self.at {
            Some((t, since)) if t == tx => since,
            _ => {
                self.barriers.arrive(tx);
                self.at = Some((tx, now));
                self.written = false;
                now
            }
        };
        if !self.barriers.all_here(tx)? {
            let budget = self.barriers.budget_ns(tx);
            if now.saturating_sub(since) >= budget {
                self.barriers.break_all();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "transaction {}'s barrier stayed shut for {} s: a flow never got there",
                        tx + 1,
                        budget / 1_000_000_000
                    ),
                ));
            }
            return Ok(Meet::Wait(Some(now.saturating_add(BARRIER_POLL_NS))));
        }
        let sent = match wire {
            Some(w) => send_go(w, &mut self.written)?,
            None => true,
        };
        Ok(if sent { Meet::Passed } else { Meet::Wait(None) })
    }

    /// The flow failed, or the test is over: nobody waits for it.
    pub(super) fn break_all(&self) {
        self.barriers.break_all();
    }
}

/// Writes the [`GO`] byte once (`written` remembers it) and flushes it: `Ok(false)` while the
/// socket has no room.
fn send_go(wire: &mut Wire, written: &mut bool) -> io::Result<bool> {
    while !*written {
        match wire.write(&[GO]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the connection took no barrier go byte",
                ))
            }
            Ok(_) => *written = true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    wire.flush()
}

/// The mirror at a barrier: reads the [`GO`] byte, `Ok(false)` while it has not come; an
/// error for anything else on the connection, or its close.
pub(super) fn read_go(wire: &mut Wire) -> io::Result<bool> {
    let mut byte = [0; 1];
    loop {
        match wire.read(&mut byte) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the other end closed the connection at a barrier",
                ))
            }
            Ok(_) => return check_go(&byte).map(|_| true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Checks that `bytes`, read where only barrier go bytes may come, are all [`GO`]: how many.
pub(super) fn check_go(bytes: &[u8]) -> io::Result<u32> {
    match bytes.iter().all(|&b| b == GO) {
        true => Ok(bytes.len() as u32),
        false => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "out of step: data where only a barrier's go byte may come",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::profile::{Repeat, Transaction};

    fn program(barriers: &[bool]) -> Program {
        Program {
            transactions: barriers
                .iter()
                .map(|&barrier| Transaction {
                    repeat: Repeat::Iterations(1),
                    rate: None,
                    barrier,
                    ops: Vec::new(),
                })
                .collect(),
            seed: 0,
        }
    }

    #[test]
    fn a_barrier_opens_when_every_flow_arrived_and_a_failure_breaks_it() {
        let p = program(&[true, true]);
        let b = Barriers::new(&p, Arc::new(SharedBarriers::new([(2, &p)])));
        b.arrive(0);
        assert!(!b.all_here(0).unwrap());
        b.arrive(0);
        assert!(b.all_here(0).unwrap());
        assert!(!b.all_here(1).unwrap());
        b.break_all();
        assert!(b.all_here(1).is_err());
    }

    #[test]
    fn the_kth_barriers_of_several_programs_meet() {
        let one = program(&[false, true, true]);
        let two = program(&[true]);
        let shared = Arc::new(SharedBarriers::new([(1, &one), (2, &two)]));
        let (a, b) = (
            Barriers::new(&one, shared.clone()),
            Barriers::new(&two, shared),
        );
        assert!(a.all_here(0).unwrap(), "not a barrier");
        a.arrive(1);
        b.arrive(0);
        assert!(!a.all_here(1).unwrap() && !b.all_here(0).unwrap());
        b.arrive(0);
        assert!(a.all_here(1).unwrap() && b.all_here(0).unwrap());
        a.arrive(2);
        assert!(
            a.all_here(2).unwrap(),
            "only the first program has a second"
        );
    }
}
