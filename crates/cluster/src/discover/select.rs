//! Which found agents take part: enough of them (`--expect`, `--min-agents`), the server
//! (`--server-index`, `--server NAME`) and the clients (`--clients HOSTLIST`, else all others).

use super::{Agent, Error, Found};
use crate::hostlist;
use std::collections::HashMap;

/// Names shown in one message before "and N more".
const SHOWN: usize = 20;

/// What the command line asks of the found agents.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    /// Agents that should be found (default 1).
    pub expect: Option<usize>,
    /// Fewest agents to go on with, naming the missing ones in a warning.
    pub min_agents: Option<usize>,
    /// The server's position among the found agents (default 0).
    pub server_index: Option<usize>,
    /// The server by name (or address) among the found agents.
    pub server: Option<String>,
    /// The clients, a host list of names among the found agents (default: all but the server).
    pub clients: Option<String>,
}

/// The agents a test runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// The accepting end.
    pub server: Agent,
    /// The connecting ends.
    pub clients: Vec<Agent>,
    /// Who was missing when `--min-agents` let the test go on without them.
    pub warning: Option<String>,
}

/// Picks the server and clients among `found` as `c` asks.
pub fn choose(found: Found, c: &Choice) -> Result<Chosen, Error> {
    let want = c.expect.unwrap_or(1);
    let have = found.ready.len();
    let gone = found.unreachable.len();
    let mut missing = Vec::new();
    if have + gone < want {
        let short = want - have - gone;
        missing.extend(found.not_ready.iter().map(|n| format!("{n} (not ready)")));
        if short > found.not_ready.len() {
            missing.push(format!("{} not listed", short - found.not_ready.len()));
        }
    }
    let unreachable = &found.unreachable;
    let agents = found.ready;
    let index = match &c.server {
        Some(name) => agents.iter().position(|a| is(a, name)).ok_or_else(|| {
            Error::Runtime(format!(
                "--server: '{name}' is not among the found agents ({})",
                names(&agents)
            ))
        })?,
        None => c.server_index.unwrap_or(0),
    };
    let server = agents.get(index).cloned().ok_or_else(|| {
        Error::Runtime(format!(
            "--server-index: {index} is past the {have} agents found{}",
            missing_part(&missing)
        ))
    })?;
    let (clients, want) = match &c.clients {
        None => {
            let others = agents.iter().enumerate().filter(|(i, _)| *i != index);
            missing.extend(unreachable.iter().map(|(n, why)| gone_text(n, why)));
            let all = want.max(have + gone);
            (others.map(|(_, a)| a.clone()).collect::<Vec<_>>(), all)
        }
        Some(list) => {
            let before = missing.len();
            let clients = listed(&agents, &server, list, unreachable, &mut missing)?;
            let named = 1 + clients.len() + missing.len() - before;
            (clients, want.max(named))
        }
    };
    let warning = enough(&missing, 1 + clients.len(), want, c.min_agents)?;
    Ok(Chosen {
        server,
        clients,
        warning,
    })
}

/// How a missing agent that did not answer is named.
fn gone_text(name: &str, why: &str) -> String {
    format!("{name} (unreachable: {why})")
}

/// The clients a host list names; names not found join `missing` (saying why when the agent
/// is listed but did not answer).
fn listed(
    agents: &[Agent],
    server: &Agent,
    list: &str,
    unreachable: &[(String, String)],
    missing: &mut Vec<String>,
) -> Result<Vec<Agent>, Error> {
    let mut clients = Vec::new();
    // By name and address, the first agent of each; looked up once per listed name.
    let mut by_key: HashMap<&str, &Agent> = HashMap::new();
    for a in agents {
        by_key.entry(a.name.as_str()).or_insert(a);
        by_key.entry(a.addr.as_str()).or_insert(a);
    }
    for name in hostlist::expand(list).map_err(|e| Error::Usage(format!("--clients: {e}")))? {
        if is(server, &name) {
            return Err(Error::Usage(format!("--clients: '{name}' is the server")));
        }
        match by_key.get(name.as_str()) {
            Some(a) => clients.push((*a).clone()),
            None => match unreachable.iter().find(|(n, _)| *n == name) {
                Some((n, why)) => missing.push(gone_text(n, why)),
                None => missing.push(name),
            },
        }
    }
    Ok(clients)
}

/// Nothing when none is missing; a warning when `min` lets the test go on with `have`; else
/// the error that names who is missing.
fn enough(
    missing: &[String],
    have: usize,
    want: usize,
    min: Option<usize>,
) -> Result<Option<String>, Error> {
    if missing.is_empty() {
        return Ok(None);
    }
    let text = format!(
        "expected {want} agents, found {have}{}",
        missing_part(missing)
    );
    match min {
        Some(m) if have >= m => Ok(Some(format!(
            "{text}; going on with {have} (--min-agents {m})"
        ))),
        Some(m) => Err(Error::Runtime(format!(
            "{text}; fewer than --min-agents {m}"
        ))),
        None => Err(Error::Runtime(format!(
            "{text}; wait longer (--discovery-timeout) or go on with fewer (--min-agents)"
        ))),
    }
}

/// "; missing: a, b and 3 more", or nothing.
fn missing_part(missing: &[String]) -> String {
    if missing.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "; missing: {}",
        missing[..missing.len().min(SHOWN)].join(", ")
    );
    if missing.len() > SHOWN {
        s.push_str(&format!(" and {} more", missing.len() - SHOWN));
    }
    s
}

/// True when `name` is the agent's name or address.
fn is(a: &Agent, name: &str) -> bool {
    a.name == name || a.addr == name
}

/// The agents' names, the first few.
fn names(agents: &[Agent]) -> String {
    let shown: Vec<&str> = agents.iter().take(SHOWN).map(|a| a.name.as_str()).collect();
    match agents.len() {
        0 => "none".into(),
        n if n > SHOWN => format!("{} and {} more", shown.join(", "), n - SHOWN),
        _ => shown.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(n: usize, not_ready: &[&str]) -> Found {
        Found {
            ready: (1..=n)
                .map(|i| Agent {
                    name: format!("node{i:02}"),
                    addr: format!("10.0.0.{i}"),
                    group: None,
                })
                .collect(),
            not_ready: not_ready.iter().map(|s| s.to_string()).collect(),
            unreachable: Vec::new(),
        }
    }

    #[test]
    fn first_is_server_the_rest_clients() {
        let c = choose(found(3, &[]), &Choice::default()).unwrap();
        assert_eq!(c.server.name, "node01");
        assert_eq!(c.clients.len(), 2);
        let c = choose(
            found(3, &[]),
            &Choice {
                server_index: Some(2),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            (c.server.name.as_str(), c.clients[1].name.as_str()),
            ("node03", "node02")
        );
    }

    #[test]
    fn server_by_name_and_clients_by_host_list() {
        let choice = Choice {
            server: Some("node01".into()),
            clients: Some("node[03-04]".into()),
            ..Default::default()
        };
        let c = choose(found(4, &[]), &choice).unwrap();
        let names: Vec<_> = c.clients.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["node03", "node04"]);
        let e = choose(found(3, &[]), &choice).unwrap_err();
        assert!(matches!(e, Error::Runtime(m) if m.contains("missing: node04")));
        let bad = Choice {
            clients: Some("node01".into()),
            ..Default::default()
        };
        assert!(matches!(choose(found(2, &[]), &bad), Err(Error::Usage(_))));
    }

    #[test]
    fn too_few_fail_or_warn_naming_the_missing() {
        let expect = |min| Choice {
            expect: Some(4),
            min_agents: min,
            ..Default::default()
        };
        let e = choose(found(2, &["pod-x"]), &expect(None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected 4 agents, found 2; missing: pod-x (not ready), 1 not listed"),
            "{e}"
        );
        let c = choose(found(2, &["pod-x"]), &expect(Some(2))).unwrap();
        assert!(c.warning.unwrap().contains("pod-x (not ready)"));
        assert!(choose(found(2, &[]), &expect(Some(3))).is_err());
        assert!(choose(found(0, &[]), &Choice::default()).is_err());
    }

    #[test]
    fn an_agent_that_does_not_answer_is_missing_and_min_agents_lets_the_rest_go_on() {
        let mut f = found(2, &[]);
        f.unreachable
            .push(("node09".into(), "connection refused".into()));
        let e = choose(f.clone(), &Choice::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "expected 3 agents, found 2; missing: node09 (unreachable: connection refused)"
            ),
            "{e}"
        );
        let c = choose(
            f.clone(),
            &Choice {
                expect: Some(3),
                min_agents: Some(2),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(c.clients.len(), 1);
        assert!(c.warning.unwrap().contains("node09 (unreachable"));
        let named = Choice {
            clients: Some("node02".into()),
            ..Default::default()
        };
        assert!(
            choose(f, &named).unwrap().warning.is_none(),
            "not named, not needed"
        );
    }
}
