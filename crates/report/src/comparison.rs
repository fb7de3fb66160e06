//! The comparison document (`fathom compare A B --json`): two stored runs, or two series, figure
//! by figure, and whether each difference is significant (Welch's t-test): runs by their
//! measured intervals (counted as the independent samples they are worth), series point by
//! point by their iterations. Pinned by `$defs/comparison` in `docs/schema/series.schema.json`.

use crate::export::Exporter;
use crate::model::Report;
use crate::series::{metrics, primary_metric, Point, Series};
use crate::settings::{self, Difference};
use crate::stats::{welch, welch_series};
use crate::table::Table;
use crate::table_series::{cell, params_text};
use serde::Serialize;

/// Two results compared.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Always `"comparison"`.
    pub document: String,
    /// The baseline, as given (`41`, `s3`).
    pub a: String,
    /// The one compared with it.
    pub b: String,
    /// Confidence level of the significance test, as a fraction (0.95).
    pub level: f64,
    /// The settings A and B differ in (empty when they were set up alike).
    pub differences: Vec<Difference>,
    /// The compared figures.
    pub rows: Vec<Row>,
}

impl crate::export::Document for Comparison {}

/// One compared figure.
#[derive(Serialize, Debug, Clone, PartialEq)]
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

impl Comparison {
    /// Two runs named `a` and `b`: every summary figure side by side; the main one tested over
    /// the intervals, each run counted as its effective number of independent intervals (see
    /// `welch_series`).
    pub fn of_runs(names: (&str, &str), a: &Report, b: &Report, level: f64) -> Comparison {
        let main = primary_metric(&a.test.kind);
        let samples = |r: &Report| -> Vec<f64> {
            r.intervals
                .iter()
                .filter(|i| !i.omitted)
                .filter_map(|i| crate::metric::of_interval(i, main))
                .collect()
        };
        let mb = metrics(b);
        let rows = metrics(a)
            .into_iter()
            .filter_map(|(name, va)| {
                let vb = mb.iter().find(|(n, _)| *n == name)?.1;
                let w = (name == main)
                    .then(|| welch_series(&samples(a), &samples(b)))
                    .flatten();
                let p = w.map(|w| w.p);
                Some(row("the test", name, (va, vb), p, level, "intervals"))
            })
            .collect();
        Comparison::new(names, level, settings::of_runs(a, b), rows)
    }

    /// Two series named `a` and `b`: matching points (by their options; two single-point series
    /// match each other), the main figure tested over the iterations.
    pub fn of_series(names: (&str, &str), a: &Series, b: &Series, level: f64) -> Comparison {
        let m = &a.primary_metric;
        let single = a.points.len() == 1 && b.points.len() == 1;
        let rows = a
            .points
            .iter()
            .filter_map(|pa| {
                let pb = if single {
                    &b.points[0]
                } else {
                    b.points.iter().find(|pb| pb.params == pa.params)?
                };
                let (sa, sb) = (pa.metric(m)?, pb.metric(m)?);
                let p = welch(&pa.values, &pb.values).map(|w| w.p);
                let values = (sa.mean, sb.mean);
                Some(row(&label(pa), m, values, p, level, "iterations"))
            })
            .collect();
        Comparison::new(names, level, settings::of_series(a, b), rows)
    }

    fn new(
        (a, b): (&str, &str),
        level: f64,
        differences: Vec<Difference>,
        rows: Vec<Row>,
    ) -> Comparison {
        Comparison {
            document: "comparison".into(),
            a: a.into(),
            b: b.into(),
            level,
            differences,
            rows,
        }
    }
}

fn label(p: &Point) -> String {
    params_text(p)
}

fn row(
    point: &str,
    metric: &str,
    (a, b): (f64, f64),
    p: Option<f64>,
    level: f64,
    basis: &str,
) -> Row {
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

impl Exporter<Comparison> for Table {
    fn export(&self, c: &Comparison) -> Vec<u8> {
        let mut t = vec![vec![
            "point".to_string(),
            "metric".into(),
            c.a.clone(),
            c.b.clone(),
            "change".into(),
            format!("significant at {:.0}%", c.level * 100.0),
        ]];
        for r in &c.rows {
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
        let mut s = aligned(&t, 2..5);
        s.push_str("(- : fewer than two independent samples on a side, or no spread; significance is tested for the main figure; a run's intervals count as the independent samples their correlation leaves)\n");
        s.into_bytes()
    }
}

/// Rows of cells as aligned lines, two spaces apart; the columns in `right` right-aligned.
pub(crate) fn aligned(t: &[Vec<String>], right: std::ops::Range<usize>) -> String {
    let columns = t.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| t.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for r in t {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, x)| {
                if right.contains(&c) {
                    format!("{x:>w$}", w = widths[c])
                } else {
                    format!("{x:<w$}", w = widths[c])
                }
            })
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::{MetricStat, Param};
    use crate::stats::describe;

    /// A point of `values` of the main figure at `write=...`.
    fn point(write: &str, values: &[f64]) -> Point {
        let mut p = Point {
            values: values.to_vec(),
            ..Point::default()
        };
        let (name, value) = ("write".to_string(), write.to_string());
        p.params.push(Param { name, value });
        let stat = describe(values, 0.95);
        let name = "bits_per_second".to_string();
        p.metrics.push(MetricStat { name, stat });
        p
    }

    fn series(points: Vec<Point>) -> Series {
        let primary_metric = "bits_per_second".to_string();
        Series {
            primary_metric,
            points,
            ..Series::default()
        }
    }

    #[test]
    fn series_compare_point_by_point_and_say_what_is_significant() {
        let a = series(vec![
            point("64K", &[100.0, 101.0, 99.0]),
            point("1M", &[10.0, 11.0, 12.0]),
        ]);
        let b = series(vec![
            point("1M", &[10.0, 12.0, 11.0]),
            point("64K", &[200.0, 201.0, 199.0]),
        ]);
        let c = Comparison::of_series(("s1", "s2"), &a, &b, 0.95);
        assert_eq!(c.document, "comparison");
        assert_eq!(c.rows.len(), 2);
        let fast = &c.rows[0];
        assert_eq!(
            (fast.point.as_str(), fast.a, fast.b),
            ("write=64K", 100.0, 200.0)
        );
        assert_eq!(fast.change_percent, 100.0);
        assert_eq!(fast.significant, Some(true));
        assert_eq!(c.rows[1].significant, Some(false));
        assert_eq!(c.rows[1].basis, "iterations");
        let text = String::from_utf8(Table.export(&c)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("point      metric"), "{text}");
        assert!(lines[0].ends_with("change  significant at 95%"), "{text}");
        assert!(lines[1].contains("+100.0%  yes (p="), "{text}");
    }
}
