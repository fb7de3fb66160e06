//! The terminal table of a series (a sweep or repeated iterations): one row per point with its
//! options, the number of runs, the main figure's mean, confidence interval, min, median and
//! max, then a few secondary figures. Plain text; the JSON is the contract.

use crate::export::Exporter;
use crate::metric::{rr, CPU_S_PER_GB, RETRANSMITS};
use crate::series::{Param, Point, Series};
use crate::table::{rate, Table};
use fathom_proto::plan::KindId;

impl Exporter<Series> for Table {
    fn export(&self, s: &Series) -> Vec<u8> {
        render(s)
    }
}

/// Secondary figures shown after the main one, by the kind's pattern: (metric, column title).
pub(crate) fn extras(s: &Series) -> &'static [(&'static str, &'static str)] {
    if KindId::from_name(&s.kind).is_some_and(|k| k.descriptor().is_rr()) {
        &[
            (rr::LATENCY_P50_US.name, "p50 µs"),
            (rr::LATENCY_P99_US.name, "p99 µs"),
            (rr::CPU_US_PER_TRANSACTION_LOCAL.name, "CPU µs/tx"),
        ]
    } else {
        &[
            (CPU_S_PER_GB.name, "CPU s/GB"),
            (RETRANSMITS.name, "retrans"),
        ]
    }
}

/// A value of `metric` as the table shows it.
pub fn cell(metric: &str, v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if metric.ends_with("bits_per_second") {
        rate(v)
    } else if metric.ends_with("per_second") {
        format!("{v:.0}/s")
    } else if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The series as the terminal shows it.
pub fn render(s: &Series) -> Vec<u8> {
    let mut out = vec![header(s), String::new()];
    let mut titles: Vec<String> = s.axes.iter().map(|a| a.name.clone()).collect();
    titles.extend(
        ["n", "mean", "±CI", "min", "median", "max"]
            .iter()
            .map(|t| t.to_string()),
    );
    titles.extend(extras(s).iter().map(|(_, t)| t.to_string()));
    let mut rows = vec![titles];
    let mut errors = Vec::new();
    for p in &s.points {
        rows.push(row(s, p));
        if let Some(e) = &p.error {
            errors.push(format!("{}: {e}", params_text(p)));
        }
    }
    out.extend(align(&rows, s.axes.len()));
    if !s.complete {
        out.push(String::new());
        out.push(format!(
            "incomplete: {} of {} points ran; run the same command with --resume to finish it",
            s.points.len(),
            s.axes
                .iter()
                .map(|a| a.values.len().max(1))
                .product::<usize>()
        ));
    }
    for e in errors {
        out.push(format!("failed at {e}"));
    }
    out.extend(missed_targets(s));
    let mut text = out.join("\n");
    text.push('\n');
    text.into_bytes()
}

/// A line for each point whose interval stayed wider than the --confidence target when the
/// most iterations ran out.
fn missed_targets(s: &Series) -> Vec<String> {
    let Some(c) = &s.confidence else {
        return Vec::new();
    };
    s.points
        .iter()
        .filter(|p| p.target_met == Some(false))
        .map(|p| {
            let width = p
                .metric(&s.primary_metric)
                .filter(|st| st.n > 1)
                .map_or("no interval".into(), |st| {
                    format!("±{:.1}%", st.relative_width() * 50.0)
                });
            format!(
                "target missed at {}: {width} after {} runs, not the ±{:.1}% asked (at {:.0}%); \
                 allow more runs with --iterations MAX",
                params_text(p),
                p.values.len(),
                c.width * 50.0,
                c.level * 100.0
            )
        })
        .collect()
}

fn header(s: &Series) -> String {
    let what = if s.axes.is_empty() {
        format!("{} iterations", s.kind)
    } else {
        format!(
            "{} sweep over {}",
            s.kind,
            s.axes
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(" × ")
        )
    };
    let rule = match &s.confidence {
        Some(c) => format!(
            ", up to {} runs a point, stop at ±{:.1}% with {:.0}% confidence",
            s.iterations,
            c.width * 50.0,
            c.level * 100.0
        ),
        None if s.iterations > 1 => format!(", {} runs a point, 95% confidence", s.iterations),
        None => String::new(),
    };
    let id =
        s.id.as_deref()
            .map(|i| format!(" [{i}]"))
            .unwrap_or_default();
    format!("fathom {what}: {}{rule}{id}", s.primary_metric)
}

/// The point's options as "sndbuf=64K parallel=10".
pub fn params_text(p: &Point) -> String {
    if p.params.is_empty() {
        return "the test".into();
    }
    p.params
        .iter()
        .map(Param::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn row(s: &Series, p: &Point) -> Vec<String> {
    let mut r: Vec<String> = p.params.iter().map(|x| x.value.clone()).collect();
    let m = &s.primary_metric;
    match p.metric(m) {
        Some(st) if st.n > 0 => {
            r.push(st.n.to_string());
            r.push(cell(m, st.mean));
            r.push(if st.n > 1 {
                format!("±{:.1}%", st.relative_width() * 50.0)
            } else {
                "-".into()
            });
            r.extend([st.min, st.median, st.max].map(|v| cell(m, v)));
        }
        _ => {
            r.push("0".into());
            r.extend(std::iter::repeat_n("-".to_string(), 5));
        }
    }
    for (metric, _) in extras(s) {
        r.push(
            p.metric(metric)
                .map_or("-".into(), |st| cell(metric, st.mean)),
        );
    }
    r
}

/// Columns padded to their widest cell: the first `left` left-aligned, the rest right-aligned.
fn align(rows: &[Vec<String>], left: usize) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|x| x.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(c, x)| {
                    if c < left {
                        format!("{x:<w$}", w = width[c])
                    } else {
                        format!("{x:>w$}", w = width[c])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        })
        .collect()
}
