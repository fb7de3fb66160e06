//! A finding as the rules give it: what it cites, why it limits, what to change, how much it
//! matters and how sure the advisor is.

use serde::Serialize;

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
