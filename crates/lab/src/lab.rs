//! A lab as recorded in its state: the handle the CLI and the controller use to find hosts,
//! their namespaces, addresses, agents and the key.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::layout::{Host, Layout, Switch};
use crate::name::{check_lab_name, parse_netns_name, DEFAULT_LAB};
use crate::state::{running_labs, State, StateDir};
use crate::topology::Link;
use crate::{netns, privilege};

/// A lab that `up` created (or began to create: see [`Lab::is_complete`]).
#[derive(Clone, Debug)]
pub struct Lab {
    pub(crate) dir: StateDir,
    pub(crate) state: State,
}

impl Lab {
    /// Loads lab `name` from its state; [`Error::NoSuchLab`] if it has none.
    pub fn load(name: &str) -> Result<Lab> {
        check_lab_name(name)?;
        let dir = StateDir::of(name);
        let state = dir
            .load()?
            .ok_or_else(|| Error::NoSuchLab(name.to_string()))?;
        Ok(Lab { dir, state })
    }

    /// The lab's name.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// Its hosts, in topology order.
    pub fn hosts(&self) -> &[Host] {
        &self.state.layout.hosts
    }

    /// The host named `name`.
    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts().iter().find(|h| h.name == name)
    }

    /// Its switches.
    pub fn switches(&self) -> &[Switch] {
        &self.state.layout.switches
    }

    /// Its links.
    pub fn links(&self) -> &[Link] {
        &self.state.layout.links
    }

    /// The whole layout.
    pub fn layout(&self) -> &Layout {
        &self.state.layout
    }

    /// The file holding the key every agent of this lab was started with (64 hex digits).
    pub fn key_file(&self) -> PathBuf {
        self.dir.key_file()
    }

    /// The lab's state directory (`/run/fathom/lab/<name>`).
    pub fn state_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Whether `up` finished building the lab.
    pub fn is_complete(&self) -> bool {
        self.state.complete
    }

    /// The namespace of the host, switch or WAN router named `node`; [`Error::NoSuchNode`] if
    /// none.
    pub fn netns_of(&self, node: &str) -> Result<&str> {
        self.layout().netns_of(node).ok_or_else(|| {
            let names = self
                .hosts()
                .iter()
                .map(|h| &h.name)
                .chain(self.switches().iter().map(|s| &s.name))
                .chain(self.layout().wans.iter().map(|w| &w.spec.router));
            Error::NoSuchNode {
                lab: self.name().to_string(),
                node: node.to_string(),
                known: names.cloned().collect::<Vec<_>>().join(", "),
            }
        })
    }

    /// Runs `cmd` inside the namespace of node `node` (`ip netns exec`) with our stdin, stdout
    /// and stderr; returns its exit code, or 128 + the signal that ended it.
    pub fn exec(&self, node: &str, cmd: &[String]) -> Result<i32> {
        privilege::require()?;
        let netns = self.netns_of(node)?;
        let status = Command::new("ip")
            .args(["netns", "exec", netns])
            .args(cmd)
            .status()
            .map_err(|e| Error::Command {
                command: "ip netns exec".to_string(),
                message: e.to_string(),
            })?;
        Ok(status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(1))
    }
}

/// The lab a command means: `name` if given; otherwise the only lab there is, or
/// [`DEFAULT_LAB`] when there is none. Several labs and none named is ambiguous, even when one
/// of them is [`DEFAULT_LAB`]: a host name such as `h1` is in each of them.
pub fn resolve_name(name: Option<&str>) -> Result<String> {
    match name {
        Some(name) => Ok(name.to_string()),
        None => pick(&running_labs()),
    }
}

/// The lab meant among `labs` (the running ones) when none is named.
fn pick(labs: &[String]) -> Result<String> {
    match labs {
        [only] => Ok(only.clone()),
        [] => Ok(DEFAULT_LAB.to_string()),
        many => Err(Error::Ambiguous(many.join(", "))),
    }
}

/// The existing namespaces whose names say they belong to lab `name`, sorted.
pub(crate) fn namespaces_of(name: &str) -> Result<Vec<String>> {
    let all = netns::list().map_err(|source| Error::Io {
        context: "listing /run/netns".to_string(),
        source,
    })?;
    Ok(all
        .into_iter()
        .filter(|ns| parse_netns_name(ns).is_some_and(|(lab, _)| lab == name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn several_labs_and_none_named_are_ambiguous_even_with_the_default_among_them() {
        assert_eq!(pick(&names(&[])).unwrap(), DEFAULT_LAB);
        assert_eq!(pick(&names(&["lab2"])).unwrap(), "lab2");
        for many in [&["lab", "lab2"][..], &["alpha", "beta"]] {
            match pick(&names(many)) {
                Err(Error::Ambiguous(list)) => assert_eq!(list, many.join(", ")),
                other => panic!("{many:?}: expected ambiguity, got {other:?}"),
            }
        }
    }
}
