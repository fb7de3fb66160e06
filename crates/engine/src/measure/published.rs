//! A kind's own counters, published whole by its flows: the kind says in its own folder how
//! they become words and back ([`Publish`]), so a flow's live counters
//! ([`super::counters::FlowStats`]) keep one slot for every kind instead of a field per kind.

use fathom_proto::kind::FlowKindCounters;
use std::any::TypeId;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters a kind publishes whole: words its flow stores and the sampler loads (single
/// writer, relaxed, as every flow counter).
pub trait Publish: 'static {
    /// How many words they take.
    const WORDS: usize;
    /// Stores them into `cells` ([`Self::WORDS`] of them).
    fn store(&self, cells: &[AtomicU64]);
    /// Reads them back from `cells`, as a snapshot carries them.
    fn load(cells: &[AtomicU64]) -> FlowKindCounters;
}

/// Stores `words` into the first of `cells`, for a [`Publish::store`] of one word per counter.
pub fn store_words<const N: usize>(cells: &[AtomicU64], words: [u64; N]) {
    for (cell, w) in cells.iter().zip(words) {
        cell.store(w, Relaxed);
    }
}

/// The first `N` of `cells` (0 past their end), for a [`Publish::load`] of one word per counter.
pub fn load_words<const N: usize>(cells: &[AtomicU64]) -> [u64; N] {
    std::array::from_fn(|i| cells.get(i).map_or(0, |c| c.load(Relaxed)))
}

/// One flow's published counters: their words, and how to read them back.
#[derive(Debug)]
pub(crate) struct Published {
    /// The type they were made for; a flow publishes one.
    of: TypeId,
    cells: Box<[AtomicU64]>,
    load: fn(&[AtomicU64]) -> FlowKindCounters,
}

impl Published {
    /// Words for `P`'s counters, all zero.
    pub(crate) fn new<P: Publish>() -> Published {
        Published {
            of: TypeId::of::<P>(),
            cells: (0..P::WORDS).map(|_| AtomicU64::new(0)).collect(),
            load: P::load,
        }
    }

    /// Stores `p`, when these words were made for its type.
    pub(crate) fn store<P: Publish>(&self, p: &P) {
        if self.of == TypeId::of::<P>() {
            p.store(&self.cells);
        }
    }

    /// The counters now.
    pub(crate) fn load(&self) -> FlowKindCounters {
        (self.load)(&self.cells)
    }
}
