//! Sweeps: one test run at every combination of the values of one or more options
//! (`--vary buffer=16K,64K --vary parallel=1,10`), the last option varying fastest, each point
//! iterated as `--iterations` says. Every point is validated before anything runs; each point's
//! runs are stored as they finish and the series after every point, so an interrupted sweep
//! resumes (`--resume`) without re-running the points it completed.
//!
//! A point is the test's own command line with the point's values added (`--buffer=64K`, or the
//! bare flag for `quickack=on`), parsed by the same code as a single test: any test option can
//! be swept, and a bad value is refused with the option's own message. Two pseudo-options exist:
//! `rtt`, the round trip of the lab's WAN emulator links (half of it each way), and `rate`, their
//! rate (`rate=100M,1G`); the links are put back as they were when the sweep ends.
//!
//! Ctrl-C stops a sweep after the running test (which is stored); a second Ctrl-C aborts it.

mod error;
mod points;
mod restore;
mod run;

pub use error::AxisError;
pub use points::{combinations, parse_axis, prepare};
pub use run::{execute, new_series, search};

use super::iterate::Rule;
use crate::cli::common::CommonArgs;
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
