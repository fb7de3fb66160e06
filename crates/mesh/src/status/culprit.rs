//! The likely culprit (goldpinger's question, "is it the target or the path?"): a member that
//! has alerts raised with at least `min` of its partners, and with at least half of the
//! partners it has results with, is more likely at fault than each of those paths. One bad
//! link between two members makes neither a culprit; one bad member makes only itself one.

use super::pair::{Culprit, PairStatus};
use std::collections::{BTreeMap, BTreeSet};

/// The culprits among `pairs`, most alerting partners first.
pub fn culprits(pairs: &[PairStatus], min: usize) -> Vec<Culprit> {
    let mut partners: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut alerting: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in pairs.iter().filter(|p| p.runs > 0) {
        for (m, other) in [(&p.source, &p.target), (&p.target, &p.source)] {
            partners.entry(m).or_default().insert(other);
            if p.alert {
                alerting.entry(m).or_default().insert(other);
            }
        }
    }
    let mut out: Vec<Culprit> = alerting
        .into_iter()
        .filter_map(|(m, with)| {
            let all = partners.get(m).map_or(0, BTreeSet::len);
            (with.len() >= min && with.len() * 2 >= all).then(|| Culprit {
                member: m.to_string(),
                alerting: with.len(),
                partners: all,
            })
        })
        .collect();
    out.sort_by(|a, b| b.alerting.cmp(&a.alerting).then(a.member.cmp(&b.member)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(s: &str, t: &str, alert: bool) -> PairStatus {
        PairStatus {
            test: "rr".into(),
            source: s.into(),
            target: t.into(),
            runs: 10,
            alert,
            ..PairStatus::default()
        }
    }

    fn mesh(bad: impl Fn(&str, &str) -> bool) -> Vec<PairStatus> {
        let names = ["h1", "h2", "h3", "h4", "h5"];
        let mut out = Vec::new();
        for s in names {
            for t in names.iter().filter(|t| **t != s) {
                out.push(pair(s, t, bad(s, t)));
            }
        }
        out
    }

    #[test]
    fn one_bad_member_is_the_culprit_and_its_partners_are_not() {
        let c = culprits(&mesh(|s, t| s == "h3" || t == "h3"), 3);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(
            (c[0].member.as_str(), c[0].alerting, c[0].partners),
            ("h3", 4, 4)
        );
    }

    #[test]
    fn one_bad_link_names_no_culprit() {
        let link = |s: &str, t: &str| matches!((s, t), ("h1", "h2") | ("h2", "h1"));
        assert!(culprits(&mesh(link), 3).is_empty());
        assert!(culprits(&mesh(|_, _| false), 3).is_empty());
    }

    #[test]
    fn a_target_bad_for_many_sources_is_a_culprit_when_it_is_most_of_them() {
        let inbound = |s: &str, t: &str| t == "h5" && s != "h1";
        let c = culprits(&mesh(inbound), 3);
        assert_eq!(
            c.iter().map(|c| c.member.as_str()).collect::<Vec<_>>(),
            ["h5"]
        );
        let mut no_runs = mesh(inbound);
        no_runs.iter_mut().for_each(|p| p.runs = 0);
        assert!(culprits(&no_runs, 3).is_empty());
    }
}
