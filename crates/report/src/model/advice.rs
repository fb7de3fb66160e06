//! The advisor's findings about a run (`advice`): present with `--advise`, absent otherwise
//! (and checked by measurement in the report's `advice_check`).
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
