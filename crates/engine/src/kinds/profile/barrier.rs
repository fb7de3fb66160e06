//! Barriers between transactions: a flow that ends a transaction marked `barrier` waits until
//! every flow of the test's connecting end has ended it too (the agent's mirrors follow their
//! connections and need none). A flow that fails breaks every barrier, so the others stop
//! with an error instead of waiting for it forever.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// How often a waiting flow looks again (ns).
pub(super) const BARRIER_POLL_NS: u64 = 1_000_000;

/// The barriers of one test's connecting end: one count per transaction.
pub(super) struct Barriers {
    flows: u32,
    arrived: Vec<AtomicU32>,
    broken: AtomicBool,
}

impl Barriers {
    /// Barriers for `flows` flows running a program of `transactions` transactions.
    pub(super) fn new(flows: u32, transactions: usize) -> Barriers {
        Barriers {
            flows,
            arrived: (0..transactions).map(|_| AtomicU32::new(0)).collect(),
            broken: AtomicBool::new(false),
        }
    }

    /// One flow reached the end of transaction `tx`.
    pub(super) fn arrive(&self, tx: usize) {
        if let Some(a) = self.arrived.get(tx) {
            a.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Whether every flow reached the end of transaction `tx`; an error once a flow failed.
    pub(super) fn all_here(&self, tx: usize) -> io::Result<bool> {
        if self.broken.load(Ordering::Acquire) {
            return Err(io::Error::other(
                "another flow failed before a barrier every flow waits at",
            ));
        }
        Ok(self
            .arrived
            .get(tx)
            .is_none_or(|a| a.load(Ordering::Acquire) >= self.flows))
    }

    /// A flow failed: nobody waits for it.
    pub(super) fn break_all(&self) {
        self.broken.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_opens_when_every_flow_arrived_and_a_failure_breaks_it() {
        let b = Barriers::new(2, 2);
        b.arrive(0);
        assert!(!b.all_here(0).unwrap());
        b.arrive(0);
        assert!(b.all_here(0).unwrap());
        assert!(!b.all_here(1).unwrap());
        b.break_all();
        assert!(b.all_here(1).is_err());
    }
}
