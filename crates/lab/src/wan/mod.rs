//! WAN links of a running lab: the user-space WAN emulator ([`fathom_wan`]) between two nodes.
//!
//! ```text
//!  h1 ──veth── [ h1  router namespace fl-<lab>-wan1  h2 ] ──veth── h2
//!                  └─ `<fathom> lab wan-router` (Forwarder) ─┘
//!                         ^ wan/<link>.sock: get / set (lab status, lab wan set)
//! ```
//! - `setup`: `lab up` prepares each router namespace (no IP forwarding, no IPv6, offloads off
//!   on all four ends of the path), starts the forwarders detached and waits until they answer.
//! - `router`: the forwarder process itself; `control`: its socket protocol.
//! - [`wan_links`] reports parameters and counters; [`set_wan`] changes a running link.

mod control;
pub(crate) mod router;
mod set;
pub(crate) mod setup;
mod status;

use serde::{Deserialize, Serialize};

use crate::layout::Layout;
pub use set::{set_wan, Directions};
pub use status::{wan_links, ForwarderStatus, WanLinkStatus};

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
