//! One pair's line of the status, and a likely culprit.

use serde::{Deserialize, Serialize};

/// One pair of one test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PairStatus {
    /// The test's name.
    pub test: String,
    /// The member that ran the connecting end.
    pub source: String,
    /// The member it tested.
    pub target: String,
    /// Runs stored.
    pub runs: u64,
    /// Of which failed.
    pub failed: u64,
    /// When the latest run started, Unix seconds.
    pub last_unix_s: Option<f64>,
    /// The latest run's figure (none if it failed).
    pub value: Option<f64>,
    /// The baseline's mean the latest run was judged against (none while learning).
    pub baseline: Option<f64>,
    /// (value − baseline) / baseline, percent.
    pub change_percent: Option<f64>,
    /// The band's low end.
    pub band_low: Option<f64>,
    /// The band's high end.
    pub band_high: Option<f64>,
    /// True while the pair's alert is raised.
    pub alert: bool,
    /// When the raised alert was raised, Unix seconds.
    pub alert_since_unix_s: Option<f64>,
}

/// A likely culprit: one member with alerts towards many of its partners.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    /// The member.
    pub member: String,
    /// Partners (other members) with an alert raised on a pair with it, either way.
    pub alerting: usize,
    /// Partners with a stored run on a pair with it.
    pub partners: usize,
}

impl PairStatus {
    /// The change against the baseline, percent, when both are known and the baseline is not 0.
    pub fn change(value: Option<f64>, baseline: Option<f64>) -> Option<f64> {
        match (value, baseline) {
            (Some(v), Some(b)) if b != 0.0 && v.is_finite() && b.is_finite() => {
                Some((v - b) / b * 100.0)
            }
            _ => None,
        }
    }
}
