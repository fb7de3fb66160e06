//! `hostfile:PATH`: one host per line as Open MPI writes it (`node01 slots=2`), or a Slurm host
//! list (`node[01-64] slots=2`); `#` starts a comment. A line's group, for per-group results, is
//! `group=NAME` in its comment (`node01 slots=2 # group=rack1`), where Open MPI does not look,
//! so the same file still works with `mpirun --hostfile`; fathom also takes `group=NAME` outside
//! the comment. A host may carry its agent's port (`127.0.0.1:5302`, `[::1]:5302`); `slots`
//! and `max_slots` are checked and otherwise ignored (one agent per host). A host listed twice
//! is one agent (Open MPI adds the slots up).

use super::{Agent, Error};
use crate::hostlist::{self, HostlistError};
use std::collections::HashSet;
use std::path::Path;

/// The agents `path` lists, in order.
pub fn read(path: &Path) -> Result<Vec<Agent>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("hostfile {}: {e}", path.display())))?;
    parse(&text)
        .map_err(|(line, e)| Error::Usage(format!("hostfile {} line {line}: {e}", path.display())))
}

/// What is wrong with one line of a hostfile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// A word after the host that is not a known `key=value`.
    #[error("'{0}' is not slots=N, max_slots=N or group=NAME")]
    UnknownWord(String),
    /// A `slots=` or `max_slots=` that is not a count above 0.
    #[error("'{0}': the count must be a whole number above 0")]
    BadCount(String),
    /// The host is not a host list.
    #[error(transparent)]
    Hosts(#[from] HostlistError),
    /// The file names more than [`hostlist::MAX_HOSTS`] hosts.
    #[error("more than {} hosts", hostlist::MAX_HOSTS)]
    TooMany,
}

/// The agents of a hostfile's text; an error names its line (from 1).
pub fn parse(text: &str) -> Result<Vec<Agent>, (usize, LineError)> {
    let mut agents: Vec<Agent> = Vec::new();
    let mut seen = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let fail = |e: LineError| (i + 1, e);
        for agent in line(raw).map_err(fail)? {
            if seen.insert(agent.addr.clone()) {
                agents.push(agent);
            }
            if agents.len() > hostlist::MAX_HOSTS {
                return Err(fail(LineError::TooMany));
            }
        }
    }
    Ok(agents)
}

/// The agents of one line (none for a blank or comment line).
fn line(raw: &str) -> Result<Vec<Agent>, LineError> {
    let (body, comment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut words = body.split_whitespace();
    let Some(host) = words.next() else {
        return Ok(Vec::new());
    };
    let mut group = comment
        .split_whitespace()
        .find_map(|w| w.strip_prefix("group="))
        .map(str::to_string);
    for word in words {
        match word.split_once('=') {
            Some(("slots" | "max_slots" | "max-slots", n)) => count(word, n)?,
            Some(("group", g)) if !g.is_empty() => group = Some(g.to_string()),
            _ => return Err(LineError::UnknownWord(word.into())),
        }
    }
    Ok(hosts(host)?
        .into_iter()
        .map(|h| Agent {
            name: h.clone(),
            addr: h,
            group: group.clone(),
        })
        .collect())
}

/// The names a host word stands for: a bracketed IPv6 address as it is, else a host list.
fn hosts(word: &str) -> Result<Vec<String>, HostlistError> {
    if word.starts_with('[') && word.contains(':') {
        return Ok(vec![word.to_string()]);
    }
    hostlist::expand(word)
}

/// Checks a `slots=N`.
fn count(word: &str, n: &str) -> Result<(), LineError> {
    match n.parse::<u32>() {
        Ok(n) if n > 0 => Ok(()),
        _ => Err(LineError::BadCount(word.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, Option<String>)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|a| (a.name, a.group))
            .collect()
    }

    #[test]
    fn open_mpi_lines_comments_and_groups() {
        let text = "# the rack\nnode01 slots=2 # group=rack1\n\n  node02 slots=4 max_slots=8\n\
                    node03 group=rack2\nnode01 slots=2\n";
        let g = |s: &str| Some(s.to_string());
        assert_eq!(
            names(text),
            [
                ("node01".into(), g("rack1")),
                ("node02".into(), None),
                ("node03".into(), g("rack2")),
            ]
        );
    }

    #[test]
    fn slurm_host_lists_and_ports() {
        let a = names("n[1-3] slots=1 # group=r\n127.0.0.1:5302\n[::1]:5303\n");
        let hosts: Vec<_> = a.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(hosts, ["n1", "n2", "n3", "127.0.0.1:5302", "[::1]:5303"]);
        assert!(a[..3].iter().all(|(_, g)| g.as_deref() == Some("r")));
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(parse("a\nb slots=0\n").unwrap_err().0, 2);
        assert_eq!(parse("a\n\nb cpus=2\n").unwrap_err().0, 3);
        assert!(parse("n[1-\n").unwrap_err().1.to_string().contains("'['"));
        let e = read(Path::new("/nonexistent/hosts")).unwrap_err();
        assert!(matches!(e, Error::Usage(m) if m.starts_with("hostfile /nonexistent/hosts: ")));
    }

    /// De-duplication is linear: 100,000 hosts took 8.5 CPU-s when each was compared with
    /// every one before it (5 billion comparisons); hashed, they take milliseconds.
    #[test]
    fn a_hundred_thousand_hosts_are_deduplicated_in_linear_time() {
        let mut text = String::from("n[000000-099999]\n");
        text.push_str(&"n000001 slots=1\n".repeat(50_000));
        let start = std::time::Instant::now();
        let agents = parse(&text).unwrap();
        let took = start.elapsed();
        assert_eq!(agents.len(), hostlist::MAX_HOSTS);
        assert!(
            took.as_secs() < 30,
            "{took:?} for 100,000 hosts (281 s quadratic, debug)"
        );
    }
}
