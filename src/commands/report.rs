//! `fathom report RUN...`: one self-contained HTML page of stored runs and series, with their
//! tables, plots, findings and the environment they ran in.

use super::show::open_existing;
use crate::cli::method::ReportArgs;
use crate::method::env;
use crate::Failure;
use fathom_report::html::{Html, Page, Section};
use fathom_report::series::Series;
use fathom_report::table_series::{cell, params_text};
use fathom_report::Exporter;
use fathom_store::{Ref, Store};

/// Writes the page.
pub fn run(a: &ReportArgs) -> Result<(), Failure> {
    let refs = a
        .runs
        .iter()
        .map(|r| Ref::parse(r).map_err(|e| Failure::Usage(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let store = open_existing(&a.store)?;
    let mut sections = Vec::new();
    let mut findings = Vec::new();
    let mut environment = None;
    for r in refs {
        match r {
            Ref::Run(id) => {
                let run = store
                    .load_run(id)
                    .map_err(|e| Failure::Runtime(e.to_string()))?;
                environment.get_or_insert(run.env.clone());
                for w in &run.report.warnings {
                    findings.push(format!("Run {id}: {w}"));
                }
                sections.push(Section::Run {
                    title: format!("Run {id}: {}", run.report.test.kind),
                    about: fathom_report::about::run_lines(
                        Some(id),
                        &run.args,
                        &run.command,
                        &run.report,
                    ),
                    report: run.report,
                });
            }
            Ref::Series(id) => {
                let s = store
                    .load_series(id)
                    .map_err(|e| Failure::Runtime(e.to_string()))?;
                if environment.is_none() {
                    environment = first_env(&store, &s);
                }
                findings.extend(series_findings(&s));
                sections.push(Section::Series {
                    title: format!("Series s{id}: {}", s.kind),
                    x_axis: s.axes.first().map(|a| a.name.clone()).unwrap_or_default(),
                    more_charts: Vec::new(),
                    series: s,
                });
            }
        }
    }
    let page = Page {
        title: a
            .title
            .clone()
            .unwrap_or_else(|| format!("fathom report: {}", a.runs.join(", "))),
        subtitle: format!(
            "fathom {} · {}",
            env!("CARGO_PKG_VERSION"),
            store.path().display()
        ),
        findings,
        sections,
        environment: environment.map(|e| env::rows(&e)).unwrap_or_default(),
    };
    write_page(&a.output, &Html.export(&page))
}

/// Writes an HTML page, saying where.
pub fn write_page(path: &std::path::Path, html: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, html)
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    eprintln!("fathom: wrote {}", path.display());
    Ok(())
}

/// The environment stored with the series' first run.
pub fn first_env(store: &Store, s: &Series) -> Option<serde_json::Value> {
    let id = s.points.iter().flat_map(|p| p.runs.first()).next()?;
    store.load_run(*id).ok().map(|r| r.env)
}

/// What a series shows at a glance, computed from it: the best and worst points of its main
/// figure and the gap between them, and the widest confidence interval.
pub fn series_findings(s: &Series) -> Vec<String> {
    let m = &s.primary_metric;
    let scored: Vec<(&fathom_report::series::Point, f64)> = s
        .points
        .iter()
        .filter_map(|p| p.metric(m).filter(|st| st.n > 0).map(|st| (p, st.mean)))
        .collect();
    let id = s.id.as_deref().unwrap_or("series");
    let mut out = Vec::new();
    let best = scored.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let worst = scored.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    if let (Some(b), Some(w)) = (best, worst) {
        if scored.len() > 1 && w.1 > 0.0 {
            out.push(format!(
                "{id}: the best point is {} at {}, {:.0}% above the lowest ({}, {}).",
                params_text(b.0),
                cell(m, b.1),
                (b.1 / w.1 - 1.0) * 100.0,
                params_text(w.0),
                cell(m, w.1)
            ));
        } else {
            out.push(format!("{id}: {} at {}.", params_text(b.0), cell(m, b.1)));
        }
    }
    let widest = s
        .points
        .iter()
        .filter_map(|p| {
            p.metric(m)
                .filter(|st| st.n > 1)
                .map(|st| (p, st.relative_width()))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((p, w)) = widest {
        out.push(format!(
            "{id}: the least certain point is {} (±{:.1}% at {:.0}% confidence).",
            params_text(p),
            w * 50.0,
            p.metric(m).map_or(0.95, |st| st.ci_level) * 100.0
        ));
    }
    let failed = s.points.iter().filter(|p| p.error.is_some()).count();
    if failed > 0 {
        out.push(format!(
            "{id}: {failed} point(s) failed; their figures are left out."
        ));
    }
    out
}
