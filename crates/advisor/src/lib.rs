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
mod host;
mod nic;
mod queues;
#[cfg(test)]
mod tests;

pub use diagnose::diagnose;
pub use settings::{IdleState, Iface, Offloads, Settings};

use serde::Serialize;

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

/// How much a finding matters; findings are ranked by it, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The setting caps throughput or latency on common paths.
    Warning,
    /// Worth knowing; it matters on some paths or workloads only.
    Note,
}

impl Severity {
    /// Its name, as the JSON has it.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// How sure the advisor is that the setting limits this host's networking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The limit follows from the value alone (arithmetic or documented kernel behaviour).
    High,
    /// It limits on most paths and workloads.
    Medium,
    /// It depends on the workload or the hardware.
    Low,
}

impl Confidence {
    /// Its name, as the JSON has it.
    pub fn name(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

/// One piece of advice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// A stable name for the rule that fired (docs/advisor.md lists them).
    pub id: &'static str,
    /// How much it matters.
    pub severity: Severity,
    /// The value read.
    pub value: String,
    /// Where it was read: a sysctl name, a path or a command.
    pub source: String,
    /// Why it limits, with the arithmetic where there is some.
    pub why: String,
    /// What to change: the exact command.
    pub change: String,
    /// How sure.
    pub confidence: Confidence,
}

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

/// The largest rate (bit/s) one stream reaches with a window of `bytes` over a path of `rtt_ms`.
pub fn window_rate(bytes: u64, rtt_ms: u64) -> f64 {
    bytes as f64 * 8.0 * 1000.0 / rtt_ms.max(1) as f64
}

/// `bits` per second in Mbit/s or Gbit/s, for the findings' arithmetic.
pub fn show_rate(bits: f64) -> String {
    if bits >= 1e9 {
        format!("{:.1} Gbit/s", bits / 1e9)
    } else {
        format!("{:.0} Mbit/s", bits / 1e6)
    }
}

/// `bytes` as KB/MB (powers of 1024), for the findings' text.
pub fn show_size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{} KB", bytes / 1024)
    }
}
