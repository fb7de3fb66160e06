//! The seeded random source behind loss and jitter: xoshiro256++ (fast, small state, good
//! statistical quality), seeded through SplitMix64 so that nearby seeds give unrelated streams.

use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A deterministic random source: the same seed gives the same draws.
#[derive(Clone, Debug)]
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// A generator whose draws depend only on `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// A uniform draw from `[0, 1)` with 53 bits of precision.
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A uniform draw from `[-span, +span]`.
    pub fn symmetric(&mut self, span: u64) -> i64 {
        if span == 0 {
            return 0;
        }
        let width = 2 * span + 1;
        (self.0.next_u64() % width) as i64 - span as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_draws() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        assert!((0..100).all(|_| a.unit() == b.unit()));
        let (mut a, mut c) = (Rng::new(42), Rng::new(43));
        assert!((0..100).any(|_| a.unit() != c.unit()));
    }

    #[test]
    fn draws_stay_in_range() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            assert!((0.0..1.0).contains(&rng.unit()));
            assert!((-5..=5).contains(&rng.symmetric(5)));
        }
        assert_eq!(rng.symmetric(0), 0);
        assert!(!rng.chance(0.0));
        assert!(rng.chance(1.0));
    }
}
