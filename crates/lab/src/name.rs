//! Lab and node names, and the namespace names made from them.
//!
//! A node `h1` of lab `x` lives in namespace `fl-x-h1`. Lab names may contain `-` but node names
//! may not, so a namespace name splits back unambiguously at its last `-`: `fl-a-b-h1` belongs to
//! lab `a-b`, never to lab `a`.

use crate::error::{Error, Result};

/// Every namespace the lab creates starts with this.
pub const NETNS_PREFIX: &str = "fl-";

/// The default lab name.
pub const DEFAULT_LAB: &str = "lab";

/// Longest lab name.
const MAX_LAB_NAME: usize = 32;

/// Longest node name: a switch port is named after its peer node, and interface names are at
/// most 15 bytes.
const MAX_NODE_NAME: usize = 15;

/// Whether `name` is 1–`max` of `A-Z a-z 0-9 _ -`, starting with a letter or digit (a lab's
/// name, a WAN link's).
pub(crate) fn is_dashed_name(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks a lab name: 1–32 of `A-Z a-z 0-9 _ -`, starting with a letter or digit.
pub fn check_lab_name(name: &str) -> Result<()> {
    if is_dashed_name(name, MAX_LAB_NAME) {
        Ok(())
    } else {
        Err(Error::BadName(format!(
            "lab name '{name}': use 1-{MAX_LAB_NAME} letters, digits, '_' or '-', starting with a \
             letter or digit"
        )))
    }
}

/// Checks a node (host or switch) name: 1–15 of `A-Z a-z 0-9 _`, starting with a letter, and
/// not `lo`.
pub fn check_node_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NODE_NAME
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "lo";
    if ok {
        Ok(())
    } else {
        Err(Error::Topology(format!(
            "node name '{name}': use 1-{MAX_NODE_NAME} letters, digits or '_', starting with a \
             letter (and not 'lo')"
        )))
    }
}

/// The namespace of `node` in lab `lab`.
pub fn netns_name(lab: &str, node: &str) -> String {
    format!("{NETNS_PREFIX}{lab}-{node}")
}

/// Splits a namespace name made by [`netns_name`] into `(lab, node)`; `None` if it is not one.
pub fn parse_netns_name(netns: &str) -> Option<(&str, &str)> {
    let rest = netns.strip_prefix(NETNS_PREFIX)?;
    let (lab, node) = rest.rsplit_once('-')?;
    (check_lab_name(lab).is_ok() && check_node_name(node).is_ok()).then_some((lab, node))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_split_back_at_the_last_dash() {
        assert_eq!(
            parse_netns_name(&netns_name("a-b", "h1")),
            Some(("a-b", "h1"))
        );
        assert_eq!(parse_netns_name("fl-lab-sw1"), Some(("lab", "sw1")));
        assert_eq!(parse_netns_name("fx-lab-h1"), None);
        assert_eq!(parse_netns_name("fl-h1"), None);
    }

    #[test]
    fn names_are_checked() {
        assert!(check_lab_name("t_rt-123").is_ok());
        assert!(check_lab_name("-x").is_err());
        assert!(check_lab_name("a b").is_err());
        assert!(check_node_name("h1").is_ok());
        assert!(check_node_name("h-1").is_err());
        assert!(check_node_name("1h").is_err());
        assert!(check_node_name("lo").is_err());
        assert!(check_node_name("a_very_long_name").is_err());
    }
}
