//! Charts of a [`Series`]: a metric against one swept option, one line per combination of the
//! other options, with the Student-t interval of each point as an error bar; and a series of
//! iterations alone, run by run.

use super::units::{axis_value, scale, Scale};
use super::{Chart, Line, Mark, PlotError, PlotPoint, Stroke};
use crate::metric::rr;
use crate::series::{Axis, Param, Point, Series};
use crate::stats::describe;

/// Axis values are written as tick labels up to this many; more get round-number ticks.
const MAX_NAMED_TICKS: usize = 16;
/// Numeric x values, or a sweep chart's positive y values, spanning more than this factor get a
/// log axis.
const LOG_SPAN: f64 = 20.0;
/// The latency percentiles [`latency_chart`] draws, with their legend names.
const PERCENTILES: [(&str, &str); 3] = [
    (rr::LATENCY_P50_US.name, "p50"),
    (rr::LATENCY_P90_US.name, "p90"),
    (rr::LATENCY_P99_US.name, "p99"),
];

/// `metric`'s mean (with its confidence interval) against the swept option `x_axis`.
pub fn sweep_chart(s: &Series, x_axis: &str, metric: &str) -> Result<Chart, PlotError> {
    let (axis, x) = positions(s, x_axis)?;
    let names = metric_names(s);
    if !names.iter().any(|n| n == metric) {
        return Err(PlotError::NoSeriesMetric {
            metric: metric.into(),
            has: list(&names),
        });
    }
    let sc = scale(metric, largest(s, &[metric]));
    let lines: Vec<Line> = groups(s, x_axis)
        .into_iter()
        .map(|(label, points)| Line {
            label: sc.line_name(label),
            points: line(&points, x_axis, &x, metric, sc.factor),
            ..Line::default()
        })
        .collect();
    let log_y = wide(&lines);
    Ok(Chart {
        title: format!("{} vs {x_axis}", sc.title),
        y_label: match log_y {
            true => format!("{} (log scale)", sc.label()),
            false => sc.label(),
        },
        log_y,
        lines,
        ..frame(axis, x)
    })
}

/// True when the lines' positive values span more than [`LOG_SPAN`]: on a linear axis the
/// small ones would lie flat against zero (datagrams/s with and without GSO).
fn wide(lines: &[Line]) -> bool {
    let ys = || lines.iter().flat_map(|l| &l.points).map(|p| p.y);
    let min = ys().filter(|y| *y > 0.0).fold(f64::MAX, f64::min);
    let max = ys().fold(0.0, f64::max);
    ys().all(|y| y > 0.0) && max / min > LOG_SPAN
}

/// The median, 90th and 99th percentile latencies against the swept option `x_axis` (the payload
/// size, typically), per combination of the other options: one color per combination, one
/// stroke and mark per percentile, so that neither is told by color alone.
pub fn latency_chart(s: &Series, x_axis: &str) -> Result<Chart, PlotError> {
    let (axis, x) = positions(s, x_axis)?;
    let names = metric_names(s);
    let present: Vec<(&str, &str)> = PERCENTILES
        .into_iter()
        .filter(|(m, _)| names.iter().any(|n| n == m))
        .collect();
    if present.is_empty() {
        return Err(PlotError::NoLatency(list(&names)));
    }
    let metrics: Vec<&str> = present.iter().map(|(m, _)| *m).collect();
    let sc = Scale::of("Latency", "µs", largest(s, &metrics));
    let mut lines = Vec::new();
    for (g, (label, points)) in groups(s, x_axis).into_iter().enumerate() {
        for (metric, short) in &present {
            let k = PERCENTILES
                .iter()
                .position(|(m, _)| m == metric)
                .unwrap_or(0);
            lines.push(Line {
                label: if label.is_empty() {
                    short.to_string()
                } else {
                    format!("{short}, {label}")
                },
                points: line(&points, x_axis, &x, metric, sc.factor),
                color: Some(g),
                stroke: [Stroke::Solid, Stroke::Dashed, Stroke::Dotted][k],
                mark: [Mark::Circle, Mark::Triangle, Mark::Square][k],
            });
        }
    }
    Ok(Chart {
        title: format!("Latency vs {x_axis}"),
        y_label: sc.label(),
        lines,
        ..frame(axis, x)
    })
}

/// A series that sweeps nothing (`--iterations` alone): each run's main figure against the
/// iteration number, and the mean of the runs so far with its Student-t interval as an error
/// bar, narrowing as the runs add up.
pub fn iteration_chart(s: &Series) -> Result<Chart, PlotError> {
    let metric = s.primary_metric.as_str();
    let Some(p) = s.points.first().filter(|_| s.axes.is_empty()) else {
        return Err(PlotError::SweepsOptions);
    };
    let level = p.metric(metric).map_or(0.95, |st| st.ci_level);
    let sc = scale(metric, p.values.iter().fold(0.0, |m, v| v.abs().max(m)));
    let f = sc.factor;
    let runs = p.values.iter().enumerate().map(|(k, &v)| PlotPoint {
        x: (k + 1) as f64,
        y: v * f,
        error: None,
    });
    let means = (1..=p.values.len()).map(|k| {
        let st = describe(&p.values[..k], level);
        PlotPoint {
            x: k as f64,
            y: st.mean * f,
            error: (k > 1).then_some(st.bounds(f)),
        }
    });
    let lines = vec![
        Line {
            label: "each run".into(),
            points: runs.collect(),
            stroke: Stroke::Dotted,
            mark: Mark::Square,
            ..Line::default()
        },
        Line {
            label: format!("mean so far, {:.0}% interval", level * 100.0),
            points: means.collect(),
            ..Line::default()
        },
    ];
    Ok(Chart {
        title: format!(
            "{} over {}",
            sc.title,
            crate::words::plural(p.values.len() as u64, "iteration")
        ),
        x_label: "iteration".into(),
        y_label: sc.label(),
        x_ticks: (1..=p.values.len())
            .map(|k| (k as f64, k.to_string()))
            .filter(|_| p.values.len() <= MAX_NAMED_TICKS)
            .collect(),
        lines,
        ..Chart::default()
    })
}

/// Where an axis's values go on the x axis.
enum Positions {
    /// Every value is a number (sizes in bytes, durations in seconds).
    Numeric,
    /// Words: each value at its index.
    Categories(Vec<String>),
}

impl Positions {
    fn of(&self, value: &str) -> Option<f64> {
        match self {
            Positions::Numeric => axis_value(value),
            Positions::Categories(v) => v.iter().position(|c| c == value).map(|i| i as f64),
        }
    }
}

fn positions<'a>(s: &'a Series, x_axis: &str) -> Result<(&'a Axis, Positions), PlotError> {
    let axis = s.axes.iter().find(|a| a.name == x_axis).ok_or_else(|| {
        let names: Vec<String> = s.axes.iter().map(|a| a.name.clone()).collect();
        if names.is_empty() {
            PlotError::NothingSwept(x_axis.into())
        } else {
            PlotError::NoSuchAxis {
                axis: x_axis.into(),
                swept: list(&names),
            }
        }
    })?;
    let numeric = axis.values.iter().all(|v| axis_value(v).is_some());
    let p = if numeric {
        Positions::Numeric
    } else {
        Positions::Categories(axis.values.clone())
    };
    Ok((axis, p))
}

/// The chart's x axis: label, ticks at the axis's values, log scale for wide numeric spans.
fn frame(axis: &Axis, x: Positions) -> Chart {
    let values: Vec<f64> = axis.values.iter().filter_map(|v| x.of(v)).collect();
    let (min, max) = values
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let log_x = matches!(x, Positions::Numeric) && min > 0.0 && max / min > LOG_SPAN;
    let x_ticks = if axis.values.len() <= MAX_NAMED_TICKS {
        axis.values
            .iter()
            .filter_map(|v| Some((x.of(v)?, v.clone())))
            .collect()
    } else {
        Vec::new()
    };
    Chart {
        x_label: if log_x {
            format!("{} (log scale)", axis.name)
        } else {
            axis.name.clone()
        },
        log_x,
        x_ticks,
        ..Chart::default()
    }
}

/// The points grouped by the values of every option but `x_axis`, in the order first seen; the
/// label names those values ("parallel=10, quickack=on"), empty when nothing else is swept.
fn groups<'a>(s: &'a Series, x_axis: &str) -> Vec<(String, Vec<&'a Point>)> {
    let mut out: Vec<(String, Vec<&Point>)> = Vec::new();
    for p in &s.points {
        let label = p
            .params
            .iter()
            .filter(|q| q.name != x_axis)
            .map(Param::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        match out.iter_mut().find(|(l, _)| *l == label) {
            Some((_, v)) => v.push(p),
            None => out.push((label, vec![p])),
        }
    }
    out
}

/// One line: the points that ran without error and have `metric`, sorted by x.
fn line(points: &[&Point], x_axis: &str, x: &Positions, metric: &str, f: f64) -> Vec<PlotPoint> {
    let mut out: Vec<PlotPoint> = points
        .iter()
        .filter(|p| p.error.is_none())
        .filter_map(|p| {
            let st = p.metric(metric).filter(|st| st.n > 0)?;
            Some(PlotPoint {
                x: x.of(p.param(x_axis)?)?,
                y: st.mean * f,
                error: (st.n > 1).then_some(st.bounds(f)),
            })
        })
        .collect();
    out.sort_by(|a, b| a.x.total_cmp(&b.x));
    out
}

/// Every metric named in the series, in the order first seen.
fn metric_names(s: &Series) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in s.points.iter().flat_map(|p| &p.metrics) {
        if !names.contains(&m.name) {
            names.push(m.name.clone());
        }
    }
    names
}

/// The largest absolute mean of `metrics` over the points.
fn largest(s: &Series, metrics: &[&str]) -> f64 {
    s.points
        .iter()
        .flat_map(|p| metrics.iter().filter_map(|m| p.metric(m)))
        .map(|st| st.mean.abs().max(st.ci_high.abs()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}
