//! fathom's studies: the classic network experiments, each a list of sweeps ([`SweepSpec`]) and
//! a function that states the findings computed from the sweeps' data (knees, plateaus, best
//! values, percentage gains), never a canned sentence. The runner in the `fathom` binary runs
//! the sweeps, stores them and draws the charts; this crate only says what to run and what the
//! results mean.
#![forbid(unsafe_code)]

mod certainty;
pub mod curve;
pub mod say;
mod search;
pub mod shape;
mod spec;
mod studies;

pub use certainty::certainty;
pub use search::{next_count, Search};
pub use spec::{Study, SweepSpec, SETUP_SECONDS, UNAVAILABLE};

use fathom_report::series::Series;

/// Every study, in the order `fathom study --list` shows them.
pub fn all() -> &'static [Study] {
    &studies::ALL
}

/// The study called `name`.
pub fn find(name: &str) -> Option<&'static Study> {
    all().iter().find(|s| s.name == name)
}

/// Everything a study found in its series: its own findings, then how certain they are.
pub fn findings(study: &Study, series: &[Series]) -> Vec<String> {
    let mut out = (study.findings)(series);
    out.extend(certainty(series));
    out
}

/// What `fathom study --list` prints: each study's name, question, source and the size of its
/// quick and full forms on this machine.
pub fn list_text() -> String {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut out = String::new();
    for s in all() {
        out.push_str(&format!("{:<15} {}\n", s.name, s.question));
        out.push_str(&format!("{:<15} source: {}\n", "", s.source));
        if s.needs_lab {
            out.push_str(&format!(
                "{:<15} runs in a two-host lab with an emulated WAN link (needs root)\n",
                ""
            ));
        }
        out.push_str(&format!(
            "{:<15} quick: {}; full: {}\n",
            "",
            size_text(&(s.sweeps)(true, cpus)),
            size_text(&(s.sweeps)(false, cpus))
        ));
    }
    out
}

/// "16 points × 1 iteration, about 21 s".
fn size_text(sweeps: &[SweepSpec]) -> String {
    let points: usize = sweeps.iter().map(|s| s.points().len()).sum();
    let iterations = sweeps.iter().map(|s| s.iterations).max().unwrap_or(1);
    let secs: f64 = sweeps.iter().map(SweepSpec::estimated_seconds).sum();
    let time = if secs < 90.0 {
        format!("{secs:.0} s")
    } else {
        format!("{:.0} min", secs / 60.0)
    };
    let its = if iterations == 1 {
        "iteration"
    } else {
        "iterations"
    };
    format!("{points} points × {iterations} {its}, about {time}")
}
