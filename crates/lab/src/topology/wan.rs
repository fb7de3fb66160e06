//! WAN links in a topology: their names, their router nodes and the emulator's parameters.

use fathom_wan::LinkParams;
use serde::{Deserialize, Serialize};

use super::error::{TopologyError, MAX_WAN_NAME};
use super::WanEntry;

/// A WAN link: a router node running the WAN emulator, joined by a veth pair to each of two
/// nodes and forwarding frames between them as a transparent layer-2 box.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wan {
    /// Its name, e.g. `h1-h2`: what `lab wan set` and `lab status` call it.
    pub name: String,
    /// The router node, `wanN` for the N-th `[[wan]]`; its namespace is `fl-<lab>-wanN`.
    pub router: String,
    /// The nodes it joins, A then B.
    pub ends: [String; 2],
    /// The router's interfaces towards A and B, named after them.
    pub interfaces: [String; 2],
    /// What frames from A to B meet.
    pub a_to_b: LinkParams,
    /// What frames from B to A meet.
    pub b_to_a: LinkParams,
}

/// The router node of the `index`-th `[[wan]]` (0-based): `wan1` for the first.
pub(super) fn router_name(index: usize) -> String {
    format!("wan{}", index + 1)
}

/// The name of a `[[wan]]` joining `a` and `b`: its own, checked, or `<a>-<b>`.
pub(super) fn name_of(entry: &WanEntry, [a, b]: [&str; 2]) -> Result<String, TopologyError> {
    let Some(name) = &entry.name else {
        return Ok(format!("{a}-{b}"));
    };
    if crate::name::is_dashed_name(name, MAX_WAN_NAME) {
        Ok(name.clone())
    } else {
        Err(TopologyError::WanName(name.clone()))
    }
}

/// The parameters of both directions: `params`, with `a_to_b` / `b_to_a` changed on top.
/// An error names the entry's key and the parameter at fault.
pub(super) fn params_of(entry: &WanEntry) -> Result<[LinkParams; 2], TopologyError> {
    let both: LinkParams =
        entry
            .params
            .as_deref()
            .unwrap_or("")
            .parse()
            .map_err(|e: fathom_wan::ParamsError| TopologyError::WanParams {
                key: "params",
                message: e.to_string(),
            })?;
    let direction = |key: &'static str, text: &Option<String>| {
        both.updated(text.as_deref().unwrap_or(""))
            .map_err(|e| TopologyError::WanParams {
                key,
                message: e.to_string(),
            })
    };
    Ok([
        direction("a_to_b", &entry.a_to_b)?,
        direction("b_to_a", &entry.b_to_a)?,
    ])
}
