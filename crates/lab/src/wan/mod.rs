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

pub use set::{set_wan, Directions};
pub use status::{wan_links, DirectionParams, ForwarderStatus, WanLinkStatus};
