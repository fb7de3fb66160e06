//! The topology's `ipsec = SUITE` keys: a `[[link]]` or `[[wan]]` entry that carries one
//! encrypts the traffic between the hosts on its two sides (a host end is that host; a switch
//! end is every host linked to that switch), each pair of them with its own IKEv2 connection.
//! A lab has one suite: every key names the same one.

use super::error::TopologyError;
use super::file::TopologyFile;
use crate::ipsec::Suite;

/// The host pairs a topology's `ipsec` keys encrypt, with their suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyIpsec {
    /// The one suite every key names.
    pub suite: Suite,
    /// The pairs of hosts, each in the topology's host order, in order, without repeats.
    pub pairs: Vec<[String; 2]>,
}

/// The pairs `file`'s `ipsec` keys ask for, or none when no entry has the key.
pub(super) fn resolve(file: &TopologyFile) -> Result<Option<TopologyIpsec>, TopologyError> {
    let keyed = file
        .links
        .iter()
        .map(|l| (&l.ends, &l.ipsec, "link"))
        .chain(file.wans.iter().map(|w| (&w.ends, &w.ipsec, "wan")))
        .filter_map(|(ends, key, what)| key.as_ref().map(|k| (ends, k, what)));
    let mut suite: Option<(Suite, String)> = None;
    let mut pairs = Vec::new();
    for (ends, key, what) in keyed {
        let entry = format!("{what} {}", ends.join("-"));
        let s = Suite::parse(key)
            .map_err(|why| TopologyError::Ipsec(format!("{entry}: ipsec: {why}")))?;
        match &suite {
            Some((first, at)) if *first != s => {
                return Err(TopologyError::Ipsec(format!(
                    "{entry}: ipsec {s}, but {at} says {first}: a lab has one IPsec suite"
                )))
            }
            Some(_) => {}
            None => suite = Some((s, entry.clone())),
        }
        let [a, b] = [0, 1].map(|i| behind(file, ends.get(i).map_or("", String::as_str)));
        for x in &a {
            for y in b.iter().filter(|y| *y != x) {
                pairs.push(ordered(file, x, y));
            }
        }
        if pairs.is_empty() {
            return Err(TopologyError::Ipsec(format!(
                "{entry}: ipsec: no host on either side to encrypt between"
            )));
        }
    }
    pairs.sort_by_key(|p| p.clone().map(|h| index(file, &h)));
    pairs.dedup();
    Ok(suite.map(|(suite, _)| TopologyIpsec { suite, pairs }))
}

/// The hosts on `node`'s side: the host itself, or every host linked to switch `node`.
fn behind(file: &TopologyFile, node: &str) -> Vec<String> {
    if file.hosts.iter().any(|h| h.name == node) {
        return vec![node.to_string()];
    }
    file.links
        .iter()
        .filter(|l| l.ends.iter().any(|e| e == node))
        .flat_map(|l| l.ends.iter().filter(|e| *e != node))
        .filter(|e| file.hosts.iter().any(|h| &&h.name == e))
        .cloned()
        .collect()
}

/// Host `name`'s place in the file (the hosts' order).
fn index(file: &TopologyFile, name: &str) -> usize {
    file.hosts
        .iter()
        .position(|h| h.name == name)
        .unwrap_or(usize::MAX)
}

/// `[x, y]` in the hosts' order.
fn ordered(file: &TopologyFile, x: &str, y: &str) -> [String; 2] {
    if index(file, x) <= index(file, y) {
        [x.to_string(), y.to_string()]
    } else {
        [y.to_string(), x.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(text: &str) -> Result<Option<TopologyIpsec>, TopologyError> {
        resolve(&toml::from_str(text).unwrap())
    }

    /// h1 and h2 on sw1, h3 on sw2 (arrays of inline tables: the same as `[[host]]` sections).
    const TWO_SWITCHES: &str = r#"
        host = [{ name = "h1" }, { name = "h2" }, { name = "h3" }]
        switch = [{ name = "sw1" }, { name = "sw2" }]
        link = [
            { ends = ["h1", "sw1"] },
            { ends = ["h2", "sw1"] },
            { ends = ["h3", "sw2"] },
        ]
    "#;

    #[test]
    fn a_wan_between_switches_encrypts_every_host_pair_across_it() {
        let text = format!(
            "{TWO_SWITCHES}\n[[wan]]\nends = [\"sw2\", \"sw1\"]\nipsec = \"aes-128-gcm\"\n"
        );
        let got = resolved(&text).unwrap().unwrap();
        assert_eq!(got.suite, Suite::Aes128Gcm);
        let pairs: Vec<_> = got.pairs.iter().map(|p| p.join("-")).collect();
        assert_eq!(pairs, ["h1-h3", "h2-h3"]);
    }

    #[test]
    fn a_host_to_switch_link_encrypts_that_host_to_the_switchs_others() {
        let text = TWO_SWITCHES.replacen(
            "ends = [\"h2\", \"sw1\"]",
            "ends = [\"h2\", \"sw1\"], ipsec = \"aes-256-gcm\"",
            1,
        );
        let got = resolved(&text).unwrap().unwrap();
        let pairs: Vec<_> = got.pairs.iter().map(|p| p.join("-")).collect();
        assert_eq!(pairs, ["h1-h2"]);
    }

    #[test]
    fn no_key_no_ipsec_and_bad_keys_are_named() {
        assert_eq!(resolved(TWO_SWITCHES).unwrap(), None);
        let bad = TWO_SWITCHES.replacen(
            "ends = [\"h3\", \"sw2\"]",
            "ends = [\"h3\", \"sw2\"], ipsec = \"des\"",
            1,
        );
        let e = resolved(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with("link h3-sw2: ipsec: 'des' is not one of"),
            "{e}"
        );
        let alone = bad.replacen("\"des\"", "\"aes-128-gcm\"", 1);
        let e = resolved(&alone).unwrap_err().to_string();
        assert!(e.contains("no host on either side"), "{e}");
        let two = format!(
            "{}\n[[wan]]\nends = [\"sw1\", \"sw2\"]\nipsec = \"chacha20-poly1305\"\n",
            TWO_SWITCHES.replacen(
                "ends = [\"h1\", \"sw1\"]",
                "ends = [\"h1\", \"sw1\"], ipsec = \"aes-128-gcm\"",
                1
            )
        );
        let e = resolved(&two).unwrap_err().to_string();
        assert!(e.contains("a lab has one IPsec suite"), "{e}");
    }
}
