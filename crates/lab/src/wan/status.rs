//! What a lab's WAN links are doing: [`wan_links`] asks each forwarder for its parameters and
//! counters, falling back to the parameters it last saved when it does not answer; and the
//! names of a lab's links, which the errors about an unknown one list.

use std::path::Path;
use std::time::Duration;

use fathom_wan::Counters;
use serde::{Deserialize, Serialize};

use super::control::{self, Request};
use crate::error::Result;
use crate::lab::Lab;
use crate::layout::{Layout, WanLink};
use crate::netns;

/// How long `status` waits for a forwarder's answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(1);

/// A WAN link's status: what `lab status` shows and what a test that crosses the link records.
#[derive(Clone, Debug, Serialize)]
pub struct WanLinkStatus {
    /// The link's name, e.g. `h1-h2`.
    pub name: String,
    /// Its router node, e.g. `wan1`.
    pub router: String,
    /// The router's namespace.
    pub netns: String,
    /// Whether that namespace exists.
    pub netns_present: bool,
    /// The nodes it joins, A then B.
    pub ends: [String; 2],
    /// The emulator's parameters per direction, in full text form (`delay=25ms,jitter=0s,…`):
    /// the forwarder's own when it answers, else those it last saved.
    pub params: DirectionParams,
    /// What it forwarded, delayed and dropped (by cause) per direction since it started; `null`
    /// when the forwarder did not answer.
    pub counters: Option<Counters>,
    /// The forwarder process.
    pub forwarder: ForwarderStatus,
}

/// A forwarder process's status.
#[derive(Clone, Debug, Serialize)]
pub struct ForwarderStatus {
    /// Its pid, once started.
    pub pid: Option<u32>,
    /// Whether that process still runs.
    pub alive: bool,
    /// Why it did not answer its control socket, when it runs but did not.
    pub error: Option<String>,
    /// CPU time it has used so far (all its threads, user and system), seconds: the emulator's
    /// cost, which lab hosts sharing this machine see in its CPU figures.
    pub cpu_s: Option<f64>,
}

/// The status of every WAN link of `lab`, in topology order. A forwarder that does not answer
/// is reported in its entry (`counters` null, `forwarder.error`), not as an error.
pub fn wan_links(lab: &Lab) -> Result<Vec<WanLinkStatus>> {
    Ok(lab
        .layout()
        .wans
        .iter()
        .map(|w| link_status(lab, w))
        .collect())
}

fn link_status(lab: &Lab, wan: &WanLink) -> WanLinkStatus {
    let spec = &wan.spec;
    let alive = wan.forwarder.as_ref().is_some_and(|f| f.is_running());
    let answer = alive.then(|| {
        match control::ask(&lab.dir.wan_socket(&spec.name), &Request::Get, ASK_TIMEOUT) {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(refused)) => Err(refused),
            Err(e) => Err(e.to_string()),
        }
    });
    let (params, counters, error) = match answer {
        Some(Ok(reply)) => {
            let params = DirectionParams {
                a_to_b: reply.a_to_b,
                b_to_a: reply.b_to_a,
            };
            (params, Some(reply.counters), None)
        }
        other => {
            let params = saved_params(&lab.dir.wan_params_file(&spec.name)).unwrap_or_else(|| {
                DirectionParams {
                    a_to_b: spec.a_to_b.to_string(),
                    b_to_a: spec.b_to_a.to_string(),
                }
            });
            (params, None, other.and_then(Result::err))
        }
    };
    WanLinkStatus {
        name: spec.name.clone(),
        router: spec.router.clone(),
        netns: wan.netns.clone(),
        netns_present: netns::exists(&wan.netns),
        ends: spec.ends.clone(),
        params,
        counters,
        forwarder: ForwarderStatus {
            pid: wan.forwarder.as_ref().map(|f| f.pid),
            alive,
            error,
            cpu_s: wan
                .forwarder
                .as_ref()
                .filter(|_| alive)
                .and_then(|f| crate::process::cpu_s(f.pid)),
        },
    }
}

/// The parameters a forwarder last saved, if it did.
fn saved_params(file: &Path) -> Option<DirectionParams> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

/// A WAN link's parameters per direction, in the emulator's text form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectionParams {
    /// For frames from A (`ends[0]`) to B (`ends[1]`).
    pub a_to_b: String,
    /// For frames from B to A.
    pub b_to_a: String,
}

/// The names of a layout's WAN links, comma-separated, or `none`.
pub(crate) fn known_names(layout: &Layout) -> String {
    let names: Vec<&str> = layout.wans.iter().map(|w| w.spec.name.as_str()).collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}
