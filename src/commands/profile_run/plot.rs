//! `profile run --plot FILE`: latency under load on one timeline, as flent's RRUL plot shows
//! it: each probe group's median iteration time per interval (ms) and each load group's
//! payload rate (Mbit/s, whichever way it goes), on a logarithmic axis so both read, the idle span before the load
//! shaded. Every group's intervals are placed on the wall clock from its test's start.

use super::group::GroupRun;
use super::rrul::{load_rates, probe_of};
use crate::Failure;
use fathom_proto::profile::ProfilePlan;
use fathom_report::model::Interval;
use fathom_report::plot::{self, Chart, ImageFormat, Line, Mark, PlotPoint, Shade, Stroke};
use std::path::Path;

/// The image's size, pixels.
const SIZE: (u32, u32) = (960, 540);

/// The format `path` asks for, checked before anything runs.
pub fn format(path: &Path) -> Result<ImageFormat, Failure> {
    ImageFormat::from_path(path).map_err(|e| Failure::Usage(format!("--plot: {e}")))
}

/// Draws the timeline of `runs` into `path`.
pub fn write(plan: &ProfilePlan, runs: &[GroupRun], path: &Path) -> Result<(), Failure> {
    let bytes = plot::render(&chart(plan, runs), format(path)?, SIZE.0, SIZE.1)
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    eprintln!("fathom: wrote {}", path.display());
    Ok(())
}

/// The chart: a line per group on the profile's timeline.
pub fn chart(plan: &ProfilePlan, runs: &[GroupRun]) -> Chart {
    let origin = runs
        .iter()
        .map(|r| r.report.test.started_unix_s)
        .fold(f64::INFINITY, f64::min);
    let mut lines = Vec::new();
    let mut load_from = f64::INFINITY;
    for (g, r) in plan.groups.iter().zip(runs) {
        let shift = r.report.test.started_unix_s - origin;
        let probe = probe_of(g).is_some();
        let point = |iv: &Interval, y: f64| PlotPoint {
            x: shift + iv.end,
            y,
            error: None,
        };
        let points: Vec<PlotPoint> = if probe {
            r.report
                .intervals
                .iter()
                .filter_map(|iv| Some(point(iv, iv.profile()?.latency_p50_us? / 1e3)))
                .collect()
        } else {
            load_rates(&r.report)
                .map(|(iv, bits)| {
                    load_from = load_from.min(shift + iv.start);
                    point(iv, bits / 1e6)
                })
                .collect()
        };
        lines.push(Line {
            label: match probe {
                true => format!("{} p50, ms", g.name),
                false => format!("{}, Mbit/s", g.name),
            },
            points,
            color: None,
            stroke: if probe { Stroke::Solid } else { Stroke::Dashed },
            mark: if probe { Mark::Circle } else { Mark::Square },
        });
    }
    Chart {
        title: format!("{}: latency under load", plan.name),
        notes: vec![format!(
            "{} groups; probes: median iteration time per interval; load: throughput",
            plan.groups.len()
        )],
        x_label: "time, s".into(),
        y_label: "probe latency, ms / throughput, Mbit/s".into(),
        log_y: true,
        shaded: load_from
            .is_finite()
            .then(|| Shade {
                from: 0.0,
                to: load_from,
                label: "idle".into(),
            })
            .into_iter()
            .collect(),
        lines,
        ..Chart::default()
    }
}
