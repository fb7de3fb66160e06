//! What a validated sweep is: its points, each ready to run, and the options it applies itself.

use crate::cli::common::CommonArgs;
use crate::method::iterate::Rule;
use fathom_proto::plan::TestPlan;
use fathom_report::series::{Axis, Param};

/// Options the sweep applies itself rather than passing to the test.
pub const PSEUDO: &[&str] = &["rtt", "rate"];

/// One point, ready to run.
#[derive(Clone, Debug)]
pub struct PointPlan {
    /// The swept options' values.
    pub params: Vec<Param>,
    /// The test's arguments at this point, as they would be typed after `fathom`.
    pub args: Vec<String>,
    /// The validated plan.
    pub plan: TestPlan,
}

/// A validated sweep.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// Test kind ("stream", "rr", "crr").
    pub kind: String,
    /// The options every point shares.
    pub base: Vec<String>,
    /// The swept options.
    pub axes: Vec<Axis>,
    /// Every point, in the order they run.
    pub points: Vec<PointPlan>,
    /// How each point iterates.
    pub rule: Rule,
    /// The first point's shared options (where to run, the store).
    pub common: CommonArgs,
}

impl SweepPlan {
    /// A string that is the same for the same sweep typed again (to find it when resuming);
    /// output and store options do not change what is measured, and a lab's name changes with
    /// each `study` run, so they are left out.
    pub fn fingerprint(&self) -> String {
        let mut measured = Vec::new();
        let mut skip = false;
        for a in &self.base {
            match a.as_str() {
                _ if skip => skip = false,
                "--store" | "--lab" => skip = true,
                "--json" | "--csv" | "--no-store" => {}
                x if x.starts_with("--store=") || x.starts_with("--lab=") => {}
                x => measured.push(x),
            }
        }
        serde_json::json!({
            "kind": self.kind,
            "base": measured,
            "axes": self.axes,
            "max": self.rule.max,
            "min": self.rule.min,
        })
        .to_string()
    }
}
