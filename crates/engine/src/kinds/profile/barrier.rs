//! Barriers between transactions: a flow that ends a transaction marked `barrier` waits until
//! every flow taking part in that barrier has ended it too (the agent's mirrors follow their
//! connections and need none). The k-th barrier of one program meets the k-th barrier of
//! every other program sharing the [`SharedBarriers`]: within one test, every flow of the
//! connecting end; across a profile's groups (tests of their own run from one process), every
//! flow of every group that has a k-th barrier. A flow that fails breaks every barrier, so the
//! others stop with an error instead of waiting for it forever.

use fathom_proto::profile::Program;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// How often a waiting flow looks again (ns).
pub(super) const BARRIER_POLL_NS: u64 = 1_000_000;

/// Barriers met by the flows of several programs (a profile's groups), by order: the k-th
/// barrier opens once every flow of every program that has a k-th barrier reached it.
#[derive(Debug)]
pub struct SharedBarriers {
    expected: Vec<u32>,
    arrived: Vec<AtomicU32>,
    broken: AtomicBool,
}

impl SharedBarriers {
    /// Barriers for `groups`, each `(flows, program)`: that many flows run that program.
    pub fn new<'a>(groups: impl IntoIterator<Item = (u32, &'a Program)>) -> SharedBarriers {
        let mut expected: Vec<u32> = Vec::new();
        for (flows, program) in groups {
            let count = barrier_count(program);
            if expected.len() < count {
                expected.resize(count, 0);
            }
            for e in &mut expected[..count] {
                *e = e.saturating_add(flows);
            }
        }
        SharedBarriers {
            arrived: expected.iter().map(|_| AtomicU32::new(0)).collect(),
            expected,
            broken: AtomicBool::new(false),
        }
    }

    /// A flow failed, or a group's test could not run: nobody waits for it.
    pub fn break_all(&self) {
        self.broken.store(true, Ordering::Release);
    }
}

/// How many of `program`'s transactions are barriers.
fn barrier_count(program: &Program) -> usize {
    program.transactions.iter().filter(|t| t.barrier).count()
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

    /// A flow failed: nobody waits for it.
    pub(super) fn break_all(&self) {
        self.shared.break_all();
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
