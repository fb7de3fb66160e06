//! The hash ring that gives each member its latency peers: every member sits on a ring at the
//! hash of its name, and its peers are the `k` members that follow it (kubenurse's ring, with
//! k = 10 by default). Each member is the peer of exactly `k` others, so the probes are spread
//! evenly; a member that joins or leaves changes the peers of only the `k` members before it,
//! so the pair series of everyone else do not churn; and a member is never its own peer.

use crate::hash::hash_str;

/// The members placed on the ring.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ring {
    /// The members' names, in ring order (by hash, then name).
    order: Vec<String>,
}

impl Ring {
    /// The ring of `members` (duplicates counted once).
    pub fn new<'a>(members: impl IntoIterator<Item = &'a str>) -> Ring {
        let mut order: Vec<(u64, &str)> = members.into_iter().map(|m| (hash_str(m), m)).collect();
        order.sort_unstable();
        order.dedup_by(|a, b| a.1 == b.1);
        Ring {
            order: order.into_iter().map(|(_, m)| m.to_string()).collect(),
        }
    }

    /// The members in ring order.
    pub fn order(&self) -> &[String] {
        &self.order
    }

    /// How many members it holds.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when it holds no member.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The `k` peers of `member` (all the others when there are fewer), in ring order; none
    /// when `member` is not on the ring.
    pub fn peers(&self, member: &str, k: usize) -> Vec<&str> {
        let Some(at) = self.order.iter().position(|m| m == member) else {
            return Vec::new();
        };
        let n = self.order.len();
        (1..n)
            .take(k)
            .map(|step| self.order[(at + step) % n].as_str())
            .collect()
    }

    /// Every (member, peer) pair of the ring with `k` peers each.
    pub fn pairs(&self, k: usize) -> Vec<(&str, &str)> {
        self.order
            .iter()
            .flat_map(|m| self.peers(m, k).into_iter().map(move |p| (m.as_str(), p)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("node-{i}")).collect()
    }

    #[test]
    fn each_member_has_k_peers_never_itself_and_is_the_peer_of_k() {
        let all = names(50);
        let ring = Ring::new(all.iter().map(String::as_str));
        let mut incoming: HashMap<&str, usize> = HashMap::new();
        for m in &all {
            let peers = ring.peers(m, 10);
            assert_eq!(peers.len(), 10);
            assert!(!peers.contains(&m.as_str()));
            let mut unique = peers.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), 10, "{m}: {peers:?}");
            for p in peers {
                *incoming.entry(p).or_default() += 1;
            }
        }
        assert!(incoming.values().all(|&n| n == 10), "{incoming:?}");
    }

    #[test]
    fn a_small_mesh_tests_everyone_and_a_stranger_nobody() {
        let ring = Ring::new(["a", "b", "c"]);
        let mut peers = ring.peers("a", 10);
        peers.sort_unstable();
        assert_eq!(peers, ["b", "c"]);
        assert!(ring.peers("z", 3).is_empty());
        assert!(Ring::new(["solo"]).peers("solo", 3).is_empty());
        assert_eq!(Ring::new(["a", "a", "b"]).len(), 2);
    }

    #[test]
    fn a_joining_member_changes_only_k_members_peers() {
        let mut all = names(100);
        let before = Ring::new(all.iter().map(String::as_str));
        all.push("newcomer".into());
        let after = Ring::new(all.iter().map(String::as_str));
        let changed = all[..100]
            .iter()
            .filter(|m| before.peers(m, 10) != after.peers(m, 10))
            .count();
        assert_eq!(changed, 10);
        all.retain(|m| m != "node-7" && m != "newcomer");
        let left = Ring::new(all.iter().map(String::as_str));
        let changed = all
            .iter()
            .filter(|m| before.peers(m, 10) != left.peers(m, 10))
            .count();
        assert_eq!(changed, 10, "a departure too");
    }
}
