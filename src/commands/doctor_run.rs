//! `fathom doctor --run N` of a run made in a lab: the settings that explain it are the lab
//! hosts', not the controller's. While the lab is up they are read through the hosts' agents
//! (the receiver's, with the sender's send-side sysctls, as `doctor HOST` does); once it is
//! down they are not available, and the advice then rests on the run's own figures, saying so.

use super::argv::test_args;
use super::doctor_remote::{settings_at, SEND_SIDE};
use crate::controller::{Target, TargetError};
use crate::Failure;
use fathom_advisor::Settings;
use fathom_report::Report;

/// The settings a lab run is explained with, and a sentence saying where they came from.
pub struct LabSettings {
    /// The receiving host's settings with the sending host's send-side sysctls (empty when
    /// the lab is down).
    pub settings: Settings,
    /// Where they were read, or why they are not available.
    pub note: String,
}

/// Why a lab host's settings cannot be read.
#[derive(Debug, thiserror::Error)]
enum Unread {
    /// The host's address cannot be dialled.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The lab has no host of that name.
    #[error("the lab has no host {0}")]
    NoHost(String),
    /// Its agent refused or failed, in its words.
    #[error("{0}")]
    Agent(String),
    /// Its agent failed without words.
    #[error("no answer")]
    NoAnswer,
}

/// The lab, server and first client the stored test `args` named, when they are a lab's hosts
/// (`--lab NAME`, or a host of the one running lab); `None` when the run was not in a lab
/// (`report` crossed no lab link) or no lab can be named.
fn lab_hosts(args: &[String], report: &Report) -> Option<(Option<String>, String, Option<String>)> {
    let t = test_args(args).ok()?;
    let c = t.run_common().ok()?;
    let server = c.server_name()?.to_string();
    let client = c.clients.first().map(|h| h.trim().to_string());
    if let Some(name) = &c.lab {
        return Some((Some(name.clone()), server, client));
    }
    let running = fathom_lab::resolve_name(None)
        .ok()
        .and_then(|n| fathom_lab::Lab::load(&n).ok())
        .filter(|l| l.host(&server).is_some());
    match running {
        Some(l) => Some((Some(l.name().to_string()), server, client)),
        None if !report.wan.is_empty() => Some((None, server, client)),
        None => None,
    }
}

/// The run's receiving host first, then its sending host: the server and the first client of a
/// forward or bidirectional run, swapped for a reverse one (`-R`: the agent sends), when the run
/// named a client host to swap with.
fn receiver_first(
    direction: &str,
    server: String,
    client: Option<String>,
) -> (String, Option<String>) {
    match client {
        Some(client) if direction == "reverse" => (client, Some(server)),
        client => (server, client),
    }
}

/// The settings that explain stored run `report` (made with `args`) when it ran in a lab;
/// `None` when it did not, and the caller reads this host's.
pub fn lab_settings(args: &[String], report: &Report) -> Option<LabSettings> {
    let (name, server, client) = lab_hosts(args, report)?;
    let (server, client) = receiver_first(&report.test.direction, server, client);
    let down = |why: String| {
        LabSettings {
        settings: Settings::default(),
        note: format!(
            "the run was in lab {}, received on {server}: {why}, so its hosts' settings are not available and the advice rests on the run's own figures (not this host's settings)",
            name.as_deref().unwrap_or("(unnamed)")
        ),
    }
    };
    let Some(name) = name.clone() else {
        return Some(down("that lab is no longer up".into()));
    };
    let lab = match fathom_lab::Lab::load(&name) {
        Ok(l) => l,
        Err(e) => return Some(down(format!("the lab is not up ({e})"))),
    };
    let read = |host: &str| -> Result<Settings, Unread> {
        let target = Target::in_lab(host, &lab)?.ok_or_else(|| Unread::NoHost(host.into()))?;
        settings_at(&target, None).map_err(|e| match e {
            Failure::Usage(m) | Failure::Runtime(m) => Unread::Agent(m),
            Failure::Reported => Unread::NoAnswer,
        })
    };
    let mut settings = match read(&server) {
        Ok(s) => s,
        Err(e) => return Some(down(format!("its agent did not answer ({e})"))),
    };
    for n in SEND_SIDE {
        settings.sysctls.remove(n);
    }
    let sender = match client.as_deref().map(|c| (c, read(c))) {
        Some((c, Ok(s))) => {
            settings.sysctls.extend(
                s.sysctls
                    .into_iter()
                    .filter(|(k, _)| SEND_SIDE.contains(&k.as_str())),
            );
            format!(", the send-side sysctls on {c}")
        }
        Some((c, Err(e))) => format!(" ({c}'s send-side sysctls not available: {e})"),
        None => " (no client host: the send-side sysctls not read)".into(),
    };
    Some(LabSettings {
        settings,
        note: format!(
            "read in lab {name} through the agents: the receiver {server}'s settings{sender}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::receiver_first;

    #[test]
    fn a_reverse_run_is_explained_by_its_client_as_the_receiver() {
        let c = || Some("h1".to_string());
        assert_eq!(
            receiver_first("forward", "h2".into(), c()),
            ("h2".into(), c())
        );
        assert_eq!(
            receiver_first("bidir", "h2".into(), c()),
            ("h2".into(), c())
        );
        assert_eq!(
            receiver_first("reverse", "h2".into(), c()),
            ("h1".into(), Some("h2".into()))
        );
        assert_eq!(
            receiver_first("reverse", "h2".into(), None),
            ("h2".into(), None)
        );
    }
}
