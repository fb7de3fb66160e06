//! fathom's lab: hosts in network namespaces, joined by veth pairs through Linux bridges, each
//! running an agent — a multi-host network on one machine.
//!
//! ```text
//! Topology (TOML or --hosts N) ─validate─> Topology ─Layout::new─> Layout ─recorded in─> state.json
//!                                                                     │
//!                 ip -batch / tc -batch scripts (script.rs) <─────────┘──> agents (agent.rs)
//! ```
//! - [`Lab::up`] records the layout, builds it, starts the agents and waits for them;
//!   [`down`] removes everything, from state and from namespace names, even after a crash;
//!   [`status`] says what exists and whether it is stale.
//! - The controller finds a host with [`Lab::load`] and [`Lab::host`], and reaches its agent
//!   with [`connect_in`], which opens the socket inside the host's namespace.
//! - A WAN link joins two nodes through the user-space WAN emulator in a router namespace of
//!   its own ([`wan`]): [`wan_links`] reports its parameters and counters, [`set_wan`] changes
//!   it while it runs.
//! - `lab up --ipsec` runs strongSwan's charon in every host and encrypts every pair of hosts'
//!   traffic with IKEv2 and ESP, in the kernel or in user space ([`ipsec`]); a topology's
//!   `ipsec` keys encrypt only the pairs across the links that carry them.
//! - Nothing is ever created in the root namespace, and nothing is connected to it.
//! - This is a library: the `fathom lab` command line and what it prints live in the binary
//!   (`src/cli/lab.rs`, `src/commands/lab/`). A WAN link's forwarder process runs
//!   [`wan_router`], which logs to that process's stdout (its log file).
//!
//! State lives in `/run/fathom/lab/<name>/`; namespaces are `fl-<name>-<node>`.

mod agent;
mod down;
mod error;
mod hosts_file;
mod ip;
pub mod ipsec;
mod lab;
mod layout;
mod name;
pub mod netns;
mod operstate;
mod privilege;
mod process;
mod script;
mod sshd;
mod state;
mod status;
pub mod topology;
mod up;
pub mod wan;

pub use agent::{AgentCommand, AgentProcess, DEFAULT_AGENT_PORT};
pub use down::{down, DownReport};
pub use error::{Error, Result};
pub use lab::{resolve_name, Lab};
pub use layout::{Host, Layout, Switch, WanLink};
pub use name::{netns_name, DEFAULT_LAB, NETNS_PREFIX};
pub use netns::{connect_in, run_in};
pub use state::write_key;
pub use state::{files_dir, running_labs, FILES_ROOT, STATE_ROOT};
pub use status::{
    status, AgentStatus, HostStatus, LinkStatus, ProcessStatus, Status, SwitchStatus,
    STATUS_SCHEMA_VERSION,
};
pub use topology::Topology;
pub use up::{UpOptions, DEFAULT_READY_TIMEOUT};
pub use wan::router::run as wan_router;
pub use wan::{set_wan, wan_links, DirectionParams, Directions, ForwarderStatus, WanLinkStatus};
