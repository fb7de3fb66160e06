//! The advisor: a snapshot of a host's settings ([`Settings`], read by [`read`]) in, findings
//! out. Each [`Finding`] cites the value it read and where, says why it limits, what to change
//! (the exact command) and how sure it is. The rules are pure functions of the snapshot, so
//! tests feed them a fake tree; the thresholds are stated in docs/advisor.md. [`diagnose`] does
//! the same for a finished run: its report's figures and the settings in, ranked advice out.
#![forbid(unsafe_code)]

pub mod diagnose;
pub mod links;
pub mod read;
pub mod settings;
pub mod verify;
pub mod wire;

mod buffers;
mod ethtool;
mod finding;
mod host;
mod nic;
mod queues;
#[cfg(test)]
mod tests;

pub use diagnose::diagnose;
pub use finding::{Confidence, Finding, Severity};
pub use settings::{IdleState, Iface, Offloads, Settings};

/// Every finding's id, in the order of the rules (docs/advisor.md, docs/schema/doctor.schema.json).
pub const IDS: &[&str] = &[
    "rmem_max",
    "wmem_max",
    "tcp_rmem",
    "tcp_wmem",
    "tcp_buffers_order",
    "rmem_default",
    "tcp_window_scaling",
    "tcp_moderate_rcvbuf",
    "congestion_control",
    "default_qdisc",
    "busy_poll",
    "somaxconn",
    "mtu",
    "rps",
    "irq_affinity",
    "offload",
    "offloads_unknown",
    "rx_ring",
    "channels",
    "rfs",
    "xps",
    "governor",
    "idle_states",
    "numa",
    "nofile",
    "nr_open",
    "link_window",
    "link_loss",
];

/// The findings for `s`, ranked: warnings before notes, surer before less sure, then in the
/// order of the rules (socket buffers, TCP, interfaces, CPU, limits).
pub fn findings(s: &Settings) -> Vec<Finding> {
    let mut out = buffers::findings(s);
    out.extend(nic::findings(s));
    out.extend(queues::findings(s));
    out.extend(host::findings(s));
    out.sort_by_key(|f| (f.severity, f.confidence));
    out
}
