//! Running a validated sweep: resuming an unfinished one, each point's iterations stored as
//! they finish, the series saved after every point, and the `rtt` pseudo-option applied to the
//! lab's WAN links.

use super::error::LinkError;
use super::plan::{SweepPlan, PSEUDO};
use super::restore::LinkGuard;
use crate::method::iterate::{self, now_unix_s, Slot};
use crate::method::Recorder;
use crate::testbed::Testbed;
use crate::Failure;
use fathom_report::series::{self, Param, Series, SERIES_SCHEMA_VERSION};

/// A new, empty series for `sp`, typed as `command` (without the program name).
pub fn new_series(sp: &SweepPlan, command: &[String]) -> Series {
    Series {
        schema_version: SERIES_SCHEMA_VERSION,
        document: "series".into(),
        fathom_version: env!("CARGO_PKG_VERSION").into(),
        kind: sp.kind.clone(),
        args: sp.base.clone(),
        command: command.to_vec(),
        axes: sp.axes.clone(),
        iterations: sp.rule.max,
        min_iterations: sp.rule.min,
        confidence: sp.rule.confidence,
        primary_metric: series::primary_metric(&sp.kind).into(),
        started_unix_s: now_unix_s(),
        ..Series::default()
    }
}

/// Runs the sweep on `bed`, storing as it goes. With `resume`, continues the newest incomplete
/// series of the same sweep, skipping its completed points. Returns the series (complete unless
/// interrupted).
pub fn execute(
    sp: &SweepPlan,
    bed: &Testbed,
    rec: &Recorder,
    resume: bool,
) -> Result<Series, Failure> {
    execute_picked(
        sp,
        bed,
        rec,
        resume,
        &|s: &Series| {
            sp.points
                .iter()
                .position(|pp| !s.points.iter().any(|p| p.params == pp.params))
        },
        None,
    )
}

/// Runs a search over the last axis of `sp` (whose values are every count it may try): `next`
/// names each next value from the series so far. The series lists only the values tried.
pub fn search(
    sp: &SweepPlan,
    bed: &Testbed,
    rec: &Recorder,
    resume: bool,
    next: &dyn Fn(&Series) -> Option<String>,
) -> Result<Series, Failure> {
    let axis = sp.axes.last().map(|a| a.name.clone()).unwrap_or_default();
    let pick = |s: &Series| {
        let value = next(s)?;
        let i = sp
            .points
            .iter()
            .position(|pp| pp.params.iter().any(|p| p.name == axis && p.value == value))?;
        let done = s.points.iter().any(|p| p.params == sp.points[i].params);
        (!done).then_some(i)
    };
    execute_picked(sp, bed, rec, resume, &pick, Some(&axis))
}

/// Runs the points `pick` chooses, one at a time, until it chooses none: the series is complete
/// then, and incomplete when interrupted. The `searched` axis keeps only the values that ran.
fn execute_picked(
    sp: &SweepPlan,
    bed: &Testbed,
    rec: &Recorder,
    resume: bool,
    pick: &dyn Fn(&Series) -> Option<usize>,
    searched: Option<&str>,
) -> Result<Series, Failure> {
    let _links = link_guard(sp, bed)?;
    bed.finish_running_test_on_interrupt();
    let (id, mut s, resuming) = open_series(sp, rec, resume)?;
    let total = sp.points.len();
    let mut interrupted = false;
    while let Some(i) = pick(&s) {
        let pp = &sp.points[i];
        if bed.interrupted() {
            eprintln!(
                "fathom: stopped by Ctrl-C after {} of {total} points; the same command with \
                 --resume runs the rest",
                s.points.len()
            );
            interrupted = true;
            break;
        }
        let label = fathom_report::table_series::params_text(&fathom_report::series::Point {
            params: pp.params.clone(),
            ..Default::default()
        });
        eprintln!("[{}/{total}] {label}", i + 1);
        if let Err(e) = apply_pseudo(bed, &pp.params) {
            let mut point = fathom_report::series::Point {
                params: pp.params.clone(),
                ..Default::default()
            };
            point.error = Some(e.to_string());
            s.points.push(point);
            continue;
        }
        let slot = id.map(|series_id| Slot {
            series_id,
            point: i as u32,
        });
        let earlier = match (resuming, id) {
            (true, Some(series_id)) => rec.finished_runs(series_id, i as u32),
            _ => Vec::new(),
        };
        let mut point = iterate::run_point(bed, &pp.plan, &sp.rule, rec, &pp.args, slot, earlier);
        point.params = pp.params.clone();
        let m = &s.primary_metric;
        match (&point.error, point.metric(m)) {
            (Some(e), _) => eprintln!("      failed: {e}"),
            (None, Some(st)) => eprintln!("      {}", iterate::show(m, st.mean)),
            _ => {}
        }
        if point.error.as_deref() == Some("interrupted") {
            eprintln!(
                "fathom: stopped by Ctrl-C during point {}; its finished iterations are kept, \
                 and the same command with --resume runs the rest",
                i + 1
            );
            interrupted = true;
            break;
        }
        s.points.push(point);
        rec.update_series(id, &s);
    }
    close_series(sp, rec, id, &mut s, !interrupted, searched);
    Ok(s)
}

/// The series to fill: with `resume`, the newest unfinished one of the same sweep (its id, the
/// series, true), else a new one.
fn open_series(
    sp: &SweepPlan,
    rec: &Recorder,
    resume: bool,
) -> Result<(Option<i64>, Series, bool), Failure> {
    let fingerprint = sp.fingerprint();
    let found = if resume {
        rec.find_incomplete(&fingerprint)?
    } else {
        None
    };
    if resume && found.is_none() {
        eprintln!("fathom: nothing to resume: no unfinished sweep like this one; starting it");
    }
    Ok(match found {
        Some((id, s)) => {
            eprintln!(
                "fathom: resuming series s{id}: {} of {} points done",
                s.points.len(),
                sp.points.len()
            );
            (Some(id), s, true)
        }
        None => {
            let mut s = new_series(sp, rec.command());
            let id = rec.create_series(&s, &fingerprint)?;
            s.id = id.map(|i| format!("s{i}"));
            (id, s, false)
        }
    })
}

/// Puts the series' points in the sweep's order, keeps of the `searched` axis only the values
/// that ran, and stores it, `complete` or not.
fn close_series(
    sp: &SweepPlan,
    rec: &Recorder,
    id: Option<i64>,
    s: &mut Series,
    complete: bool,
    searched: Option<&str>,
) {
    s.points.sort_by_key(|p| {
        sp.points
            .iter()
            .position(|pp| pp.params == p.params)
            .unwrap_or(usize::MAX)
    });
    s.complete = complete;
    if let Some(a) = s
        .axes
        .iter_mut()
        .find(|a| Some(a.name.as_str()) == searched)
    {
        let ran: Vec<String> = s
            .points
            .iter()
            .filter_map(|p| p.param(&a.name).map(str::to_string))
            .collect();
        a.values.retain(|v| ran.contains(v));
    }
    rec.update_series(id, s);
    if let (Some(path), Some(i)) = (rec.path(), id) {
        eprintln!("fathom: stored as series s{i} in {}", path.display());
    }
}

/// For a sweep that varies the lab's WAN links: refuses it outside a lab, and saves the links
/// so that they are put back when the sweep ends, however it ends.
fn link_guard<'a>(sp: &SweepPlan, bed: &'a Testbed) -> Result<Option<LinkGuard<'a>>, Failure> {
    let Some(a) = sp.axes.iter().find(|a| PSEUDO.contains(&a.name.as_str())) else {
        return Ok(None);
    };
    let Some(lab) = bed.lab() else {
        return Err(Failure::Usage(format!(
            "--vary {} sets the lab's WAN links: run between lab hosts (--server h1 --clients h2)",
            a.name
        )));
    };
    LinkGuard::save(lab)
        .map(Some)
        .map_err(|e| Failure::Runtime(e.to_string()))
}

/// Applies the point's pseudo-options to every WAN link of the testbed's lab: `rtt` sets half
/// the round trip each way, `rate` the links' rate.
fn apply_pseudo(bed: &Testbed, params: &[Param]) -> Result<(), LinkError> {
    let mut set = Vec::new();
    for p in params.iter().filter(|p| PSEUDO.contains(&p.name.as_str())) {
        set.push(match p.name.as_str() {
            "rtt" => {
                let ns = crate::cli::units::parse_duration(&p.value)?;
                format!("delay={}us", ns / 2_000)
            }
            _ => p.to_string(),
        });
    }
    let Some(first) = params.iter().find(|p| PSEUDO.contains(&p.name.as_str())) else {
        return Ok(());
    };
    let lab = bed
        .lab()
        .ok_or_else(|| LinkError::NoLab(first.name.clone()))?;
    let links = fathom_lab::wan_links(lab)?;
    if links.is_empty() {
        return Err(LinkError::NoWanLink {
            axis: first.name.clone(),
            lab: lab.name().into(),
        });
    }
    let params = set.join(",");
    for l in links {
        fathom_lab::set_wan(lab, &l.name, &params, fathom_lab::Directions::Both, false)?;
    }
    Ok(())
}
