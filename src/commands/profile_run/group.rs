//! One group's test of a profile run, as the run, its plot and its latency under load read it.

use fathom_report::Report;
use serde::Serialize;

/// One group's test, as run.
#[derive(Serialize, Debug)]
pub struct GroupRun {
    /// The group's name.
    pub group: String,
    /// Its test's report.
    pub report: Report,
}
