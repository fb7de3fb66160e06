//! The advisor's findings about a run (`advice`): present with `--advise`, absent otherwise.
//! The report only holds them; the advisor (crates/advisor, `diagnose`) makes them from the
//! report's figures and the host's settings, so the report crate reads no settings.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One finding about what limited a run, ranked by its place in `advice`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Advice {
    /// The cause, a stable name (docs/advisor.md lists them).
    pub id: String,
    /// "warning" (it limited this run) or "note" (worth knowing; expected on this path).
    pub severity: String,
    /// "high", "medium" or "low".
    pub confidence: String,
    /// What was seen, with the figures it cites.
    pub seen: String,
    /// The figures cited, by name, as read from the run or the host's settings.
    pub figures: BTreeMap<String, f64>,
    /// Why it limits.
    pub why: String,
    /// What to change: the exact fathom option, sysctl or command.
    pub change: String,
}

/// The top finding's change checked by measurement (`fathom doctor --run N --verify`, or a
/// test's `--advise --verify-advice`): the test re-run with the change and as it was,
/// alternately, and the ratio of its main figure after to before with its interval.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct AdviceCheck {
    /// The finding checked (the top one), if any.
    pub finding: Option<String>,
    /// "rerun" (the option was measured), "applied" (`--apply`: the sysctl was set in the lab's
    /// namespaces and measured), "system" (a system change, printed only) or "nothing" (no
    /// change one re-run can check).
    pub outcome: String,
    /// The change: the fathom option and value, or the system command.
    pub change: String,
    /// The figure compared (the kind's main one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `--apply`: the lab namespaces the sysctl was set in (and set back in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_in: Vec<String>,
    /// The test as it was, as re-run.
    pub before_args: Vec<String>,
    /// The test with the change, as re-run.
    pub after_args: Vec<String>,
    /// The figure of each run without the change, in order.
    pub before: Vec<f64>,
    /// The figure of each run with it, in order.
    pub after: Vec<f64>,
    /// What the last run with the change really ran with: its report's test echo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_test: Option<super::TestEcho>,
    /// After / before, the means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// The ratio's confidence interval, low end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Its high end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// Its level, 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_level: Option<f64>,
}
