//! Members down: a member whose agent could not be reached is marked down; its tests are not
//! tried (they are counted as `down`), and it is probed again after 1 s, then 2, 4, ... up to
//! a minute, each wait with a random tenth added, so a dead host costs a probe a minute rather
//! than a connection per due test, and the agents that lost it do not all probe at once.

use crate::hash::{below, hash_str, mix};
use std::collections::BTreeMap;

/// The first wait before probing a member that went down.
pub const FIRST_PROBE_NS: u64 = 1_000_000_000;
/// The longest wait between probes.
pub const MAX_PROBE_NS: u64 = 60_000_000_000;

/// One member down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Down {
    /// Since when.
    pub since_ns: u64,
    /// Failed attempts in a row (the one that marked it down, then the probes).
    pub failures: u32,
    /// When it is probed next.
    pub next_probe_ns: u64,
    /// Why the last attempt failed.
    pub reason: String,
}

/// Which members are down.
#[derive(Clone, Debug, Default)]
pub struct Health {
    down: BTreeMap<String, Down>,
}

impl Health {
    /// Nobody down.
    pub fn new() -> Health {
        Health::default()
    }

    /// `member` could not be reached at `now`: marked down (or kept down with one failure
    /// more) and its next probe put off, doubling. Returns when it is probed next.
    pub fn failed(&mut self, member: &str, now: u64, reason: &str) -> u64 {
        let d = self.down.entry(member.to_string()).or_insert(Down {
            since_ns: now,
            failures: 0,
            next_probe_ns: now,
            reason: String::new(),
        });
        d.failures = d.failures.saturating_add(1);
        let wait = FIRST_PROBE_NS
            .saturating_mul(1 << (d.failures - 1).min(16))
            .min(MAX_PROBE_NS);
        let spread = below(mix(hash_str(member) ^ now), wait / 10 + 1);
        d.next_probe_ns = now.saturating_add(wait + spread);
        d.reason = reason.chars().take(200).collect();
        d.next_probe_ns
    }

    /// `member` answered: up again. True when it was down.
    pub fn up(&mut self, member: &str) -> bool {
        self.down.remove(member).is_some()
    }

    /// True while `member` is down.
    pub fn is_down(&self, member: &str) -> bool {
        self.down.contains_key(member)
    }

    /// The members down whose probe is due at `now`.
    pub fn probes_due(&self, now: u64) -> Vec<String> {
        self.down
            .iter()
            .filter(|(_, d)| d.next_probe_ns <= now)
            .map(|(m, _)| m.clone())
            .collect()
    }

    /// When the next probe falls due, if any member is down.
    pub fn next_probe(&self) -> Option<u64> {
        self.down.values().map(|d| d.next_probe_ns).min()
    }

    /// The members down, by name.
    pub fn down(&self) -> &BTreeMap<String, Down> {
        &self.down
    }

    /// Forgets members no longer in the mesh.
    pub fn retain(&mut self, members: &[String]) {
        self.down.retain(|m, _| members.contains(m));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_down_is_probed_with_back_off_not_in_a_tight_loop() {
        let mut h = Health::new();
        let s = 1_000_000_000u64;
        let mut now = 0;
        let mut probes = 0;
        h.failed("h3", now, "connection refused");
        // Ten minutes of a scheduler that wakes every 10 ms and probes whatever is due.
        while now < 600 * s {
            for m in h.probes_due(now) {
                probes += 1;
                h.failed(&m, now, "connection refused");
            }
            now += 10_000_000;
        }
        // 1 + 2 + 4 + 8 + 16 + 32 s, then one a minute (each up to a tenth later).
        assert!((14..=17).contains(&probes), "{probes} probes");
        let d = &h.down()["h3"];
        assert!(d.next_probe_ns - now <= MAX_PROBE_NS + MAX_PROBE_NS / 10);
        assert!(h.is_down("h3") && h.up("h3") && !h.is_down("h3"));
        assert!(!h.up("h3"));
    }

    #[test]
    fn the_first_waits_double() {
        let mut h = Health::new();
        let first = h.failed("a", 0, "x");
        assert!((FIRST_PROBE_NS..=FIRST_PROBE_NS * 11 / 10).contains(&first));
        let second = h.failed("a", first, "x") - first;
        assert!((2 * FIRST_PROBE_NS..=2 * FIRST_PROBE_NS * 11 / 10).contains(&second));
        assert_eq!(h.next_probe(), Some(first + second));
        h.retain(&[]);
        assert!(h.next_probe().is_none());
    }
}
