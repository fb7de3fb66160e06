//! `fathom compare A B`: the differences between two stored runs or series, and whether each is
//! significant (Welch's t-test): runs by their measured intervals (counted as the independent
//! samples they are worth), series point by point by their iterations.

use super::output::write_stdout;
use super::show::open_existing;
use crate::cli::method::CompareArgs;
use crate::Failure;
use fathom_report::model::Report;
use fathom_report::series::{metrics, Point, Series};
use fathom_report::stats::{welch, welch_series};
use fathom_report::table_series::{cell, params_text};
use fathom_store::{Ref, Store};
use serde::Serialize;

/// One compared figure.
#[derive(Serialize, Debug, Clone)]
pub struct Row {
    /// The point ("sndbuf=64K parallel=10"), or "the test" for runs.
    pub point: String,
    /// Metric name.
    pub metric: String,
    /// A's value (mean over its samples).
    pub a: f64,
    /// B's value.
    pub b: f64,
    /// (B − A) / A, percent.
    pub change_percent: f64,
    /// Welch's two-sided p, when both sides have at least two samples with spread.
    pub p: Option<f64>,
    /// p below 1 − level.
    pub significant: Option<bool>,
    /// What the samples were: "intervals" (each run counted as its effective sample size) or
    /// "iterations".
    pub basis: String,
}

/// Compares two stored results.
pub fn run(a: &CompareArgs) -> Result<(), Failure> {
    if !(50.0..100.0).contains(&a.level) {
        return Err(Failure::Usage(format!(
            "--level: {} is not a percentage between 50 and 100",
            a.level
        )));
    }
    let ra = Ref::parse(&a.a).map_err(|e| Failure::Usage(e.to_string()))?;
    let rb = Ref::parse(&a.b).map_err(|e| Failure::Usage(e.to_string()))?;
    let store = open_existing(&a.store)?;
    let level = a.level / 100.0;
    let rows = match (ra, rb) {
        (Ref::Run(x), Ref::Run(y)) => runs(&load(&store, x)?, &load(&store, y)?, level),
        (Ref::Series(x), Ref::Series(y)) => series(&load_s(&store, x)?, &load_s(&store, y)?, level),
        _ => {
            return Err(Failure::Usage(
                "compare two runs (41 42) or two series (s3 s4), not one of each".into(),
            ))
        }
    };
    if rows.is_empty() {
        return Err(Failure::Runtime(format!(
            "{} and {} have no figures in common to compare",
            a.a, a.b
        )));
    }
    let out = if a.json {
        let mut v = serde_json::to_vec_pretty(&serde_json::json!({
            "document": "comparison",
            "a": a.a, "b": a.b, "level": level, "rows": rows,
        }))
        .unwrap_or_default();
        v.push(b'\n');
        v
    } else {
        table(&a.a, &a.b, level, &rows)
    };
    write_stdout(&out);
    Ok(())
}

fn load(store: &Store, id: i64) -> Result<Report, Failure> {
    store
        .load_run(id)
        .map(|r| r.report)
        .map_err(|e| Failure::Runtime(e.to_string()))
}

fn load_s(store: &Store, id: i64) -> Result<Series, Failure> {
    store
        .load_series(id)
        .map_err(|e| Failure::Runtime(e.to_string()))
}

/// Two runs: every summary figure side by side; the main one tested over the intervals, each
/// run counted as its effective number of independent intervals (see `welch_series`).
fn runs(a: &Report, b: &Report, level: f64) -> Vec<Row> {
    let main = fathom_report::series::primary_metric(&a.test.kind);
    let samples = |r: &Report| -> Vec<f64> {
        r.intervals
            .iter()
            .filter(|i| !i.omitted)
            .filter_map(|i| i.metric(main))
            .collect()
    };
    let mb = metrics(b);
    metrics(a)
        .into_iter()
        .filter_map(|(name, va)| {
            let vb = mb.iter().find(|(n, _)| *n == name)?.1;
            let w = if name == main {
                welch_series(&samples(a), &samples(b))
            } else {
                None
            };
            Some(row(
                "the test",
                name,
                va,
                vb,
                w.map(|w| w.p),
                level,
                "intervals",
            ))
        })
        .collect()
}

/// Two series: matching points (by their options; two single-point series match each other),
/// the main figure tested over the iterations.
fn series(a: &Series, b: &Series, level: f64) -> Vec<Row> {
    let m = &a.primary_metric;
    let single = a.points.len() == 1 && b.points.len() == 1;
    a.points
        .iter()
        .filter_map(|pa| {
            let pb = if single {
                &b.points[0]
            } else {
                b.points.iter().find(|pb| pb.params == pa.params)?
            };
            let (sa, sb) = (pa.metric(m)?, pb.metric(m)?);
            let p = welch(&pa.values, &pb.values).map(|w| w.p);
            Some(row(&label(pa), m, sa.mean, sb.mean, p, level, "iterations"))
        })
        .collect()
}

fn label(p: &Point) -> String {
    params_text(p)
}

fn row(point: &str, metric: &str, a: f64, b: f64, p: Option<f64>, level: f64, basis: &str) -> Row {
    Row {
        point: point.to_string(),
        metric: metric.to_string(),
        a,
        b,
        change_percent: if a == 0.0 {
            0.0
        } else {
            (b - a) / a.abs() * 100.0
        },
        p,
        significant: p.map(|p| p < 1.0 - level),
        basis: basis.to_string(),
    }
}

fn table(a: &str, b: &str, level: f64, rows: &[Row]) -> Vec<u8> {
    let mut t = vec![vec![
        "point".to_string(),
        "metric".into(),
        a.to_string(),
        b.to_string(),
        "change".into(),
        format!("significant at {:.0}%", level * 100.0),
    ]];
    for r in rows {
        let sig = match (r.significant, r.p) {
            (Some(true), Some(p)) => format!("yes (p={p:.3}, {})", r.basis),
            (Some(false), Some(p)) => format!("no (p={p:.3}, {})", r.basis),
            _ => "-".into(),
        };
        t.push(vec![
            r.point.clone(),
            r.metric.clone(),
            cell(&r.metric, r.a),
            cell(&r.metric, r.b),
            format!("{:+.1}%", r.change_percent),
            sig,
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| t.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for r in &t {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, x)| {
                if (2..5).contains(&c) {
                    format!("{x:>w$}", w = widths[c])
                } else {
                    format!("{x:<w$}", w = widths[c])
                }
            })
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    s.push_str("(- : fewer than two independent samples on a side, or no spread; significance is tested for the main figure; a run's intervals count as the independent samples their correlation leaves)\n");
    s.into_bytes()
}
