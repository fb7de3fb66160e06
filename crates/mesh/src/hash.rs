//! Stable hashes (XXH3, the same on every host and release) of names and of a schedule's
//! coordinates, so that every agent of a mesh computes the same ring, phases and rotations
//! without talking to the others.

use twox_hash::XxHash3_64;

/// The hash of a member's name, its place on the ring.
pub fn hash_str(s: &str) -> u64 {
    XxHash3_64::oneshot(s.as_bytes())
}

/// A hash of `seed` and `parts` (each part's length is mixed in, so ("ab","c") ≠ ("a","bc")).
pub fn hash_of(seed: u64, parts: &[&str]) -> u64 {
    let mut bytes = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
    for p in parts {
        bytes.extend_from_slice(&(p.len() as u64).to_le_bytes());
        bytes.extend_from_slice(p.as_bytes());
    }
    XxHash3_64::oneshot_with_seed(seed, &bytes)
}

/// splitmix64's step: a well-spread 64-bit value from `x` (distinct inputs, distinct outputs).
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A value in `0..n` from the hash `h` (0 when `n` is 0), without modulo bias worth noting.
pub fn below(h: u64, n: u64) -> u64 {
    ((u128::from(h) * u128::from(n)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_part_boundaries_count() {
        assert_eq!(hash_str("h1"), hash_str("h1"));
        assert_ne!(hash_of(1, &["ab", "c"]), hash_of(1, &["a", "bc"]));
        assert_ne!(hash_of(1, &["a"]), hash_of(2, &["a"]));
        assert_ne!(mix(1), mix(2));
    }

    #[test]
    fn below_spreads_over_its_range() {
        let mut seen = [0u32; 10];
        for i in 0..10_000u64 {
            seen[below(mix(i), 10) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (900..1100).contains(&n)), "{seen:?}");
        assert_eq!(below(u64::MAX, 0), 0);
    }
}
