//! `lab wan set`: change the parameters of a running WAN link through its forwarder.

use std::time::Duration;

use fathom_wan::LinkParams;

use super::control::{self, Request};
use super::status::{wan_links, WanLinkStatus};
use crate::error::{Error, Result};
use crate::lab::Lab;

/// How long `set` waits for the forwarder's answer.
const SET_TIMEOUT: Duration = Duration::from_secs(2);

/// Which directions of a WAN link a change applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Directions {
    /// Both directions.
    #[default]
    Both,
    /// Frames from A (`ends[0]`) to B only.
    AToB,
    /// Frames from B to A only.
    BToA,
}

/// Changes WAN link `name` (or the link of router node `name`) of `lab` while it runs: the keys
/// written in `params` change, the others keep their values — or take their defaults with
/// `reset`. The forwarder applies the change within 20 ms and saves it. Returns the link's
/// status afterwards.
pub fn set_wan(
    lab: &Lab,
    name: &str,
    params: &str,
    directions: Directions,
    reset: bool,
) -> Result<WanLinkStatus> {
    let wan = lab.layout().wan(name).ok_or_else(|| Error::NoSuchWan {
        lab: lab.name().to_string(),
        name: name.to_string(),
        known: super::status::known_names(lab.layout()),
    })?;
    let link = wan.spec.name.clone();
    let refused = |message: String| Error::WanParams {
        link: link.clone(),
        message,
    };
    params
        .parse::<LinkParams>()
        .map_err(|e| refused(e.to_string()))?;
    let text = Some(params.to_string());
    let (a_to_b, b_to_a) = match directions {
        Directions::Both => (text.clone(), text),
        Directions::AToB => (text, None),
        Directions::BToA => (None, text),
    };
    let request = Request::Set {
        a_to_b,
        b_to_a,
        reset,
    };
    let not_running = |reason: String| Error::Forwarder {
        link: link.clone(),
        reason,
    };
    if !wan.forwarder.as_ref().is_some_and(|f| f.is_running()) {
        return Err(not_running(
            "it is not running; recreate the lab with `fathom lab down` and `fathom lab up`"
                .to_string(),
        ));
    }
    control::ask(&lab.dir.wan_socket(&link), &request, SET_TIMEOUT)
        .map_err(|e| not_running(format!("no answer on its control socket: {e}")))?
        .map_err(refused)?;
    wan_links(lab)?
        .into_iter()
        .find(|w| w.name == link)
        .ok_or_else(|| not_running("it vanished from the lab's state".to_string()))
}
