//! Throughput pairs by rotation: in round `r`, the member at ring position `i` tests the one at
//! `i + 1 + (r mod (N − 1))`. Each round is a permutation of the members, so every member is
//! the source of one exclusive test and the target of one per period (no member is asked for
//! two at once by the schedule itself), and N − 1 rounds cover every ordered pair once: a
//! sample of the pairs each period instead of all N² of them (pScheduler's full mesh of
//! exclusive tests is what made its throughput data "very sparse").

/// The target of `source` in round `round`, among `order` (the members in ring order); none
/// when `source` is not among them or is alone.
pub fn target<'a>(order: &'a [String], source: &str, round: u64) -> Option<&'a str> {
    let n = order.len();
    if n < 2 {
        return None;
    }
    let at = order.iter().position(|m| m == source)?;
    let shift = 1 + (round % (n as u64 - 1)) as usize;
    Some(order[(at + shift) % n].as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn order(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("m{i}")).collect()
    }

    #[test]
    fn each_round_is_a_permutation_without_self_tests() {
        let o = order(7);
        for round in 0..20 {
            let targets: HashSet<&str> = o.iter().map(|s| target(&o, s, round).unwrap()).collect();
            assert_eq!(targets.len(), 7, "round {round}");
            assert!(o.iter().all(|s| target(&o, s, round) != Some(s.as_str())));
        }
    }

    #[test]
    fn n_minus_one_rounds_cover_every_ordered_pair_once() {
        let o = order(6);
        let mut pairs = HashSet::new();
        for round in 0..5 {
            for s in &o {
                assert!(pairs.insert((s.clone(), target(&o, s, round).unwrap())));
            }
        }
        assert_eq!(pairs.len(), 6 * 5);
        assert_eq!(target(&o, "stranger", 0), None);
        assert_eq!(target(&order(1), "m0", 0), None);
    }
}
