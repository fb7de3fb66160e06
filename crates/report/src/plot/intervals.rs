//! Time series of one run: a metric per interval against the interval's end, the warm-up
//! (omitted) intervals drawn too, under a shaded span. `packets` draws data packets and ACK
//! packets per second, the classic picture of how many ACKs a stream of data draws.

use super::units::scale;
use super::{Chart, Line, PlotError, PlotPoint, Shade};
use crate::metric::{self, PACKETS};
use crate::model::{Interval, Report};

/// The metrics [`interval_chart`] knows: every metric intervals have (the registry's, in its
/// order), then data and ACK packets.
pub fn interval_metrics() -> Vec<&'static str> {
    metric::of_intervals()
        .chain([&PACKETS])
        .map(|m| m.name)
        .collect()
}

/// `metric` over `r`'s intervals (x = each interval's end, seconds since the test started).
pub fn interval_chart(r: &Report, metric: &str) -> Result<Chart, PlotError> {
    let known = interval_metrics();
    if !known.contains(&metric) {
        return Err(PlotError::NoIntervalMetric {
            metric: metric.into(),
            choices: known.join(", "),
        });
    }
    if r.intervals.is_empty() {
        return Err(PlotError::NoIntervals);
    }
    let raw = if metric == PACKETS.name {
        packets(&r.intervals)?
    } else {
        vec![(String::new(), one(&r.intervals, metric)?)]
    };
    let max = raw
        .iter()
        .flat_map(|(_, v)| v)
        .map(|p| p.1.abs())
        .fold(0.0, f64::max);
    let sc = scale(metric, max);
    let lines = raw
        .into_iter()
        .map(|(label, values)| Line {
            label: sc.line_name(label),
            points: values
                .into_iter()
                .map(|(x, y)| PlotPoint {
                    x,
                    y: y * sc.factor,
                    error: None,
                })
                .collect(),
            ..Line::default()
        })
        .collect();
    Ok(Chart {
        title: if metric == PACKETS.name {
            "Data and ACK packets over time".into()
        } else {
            format!("{} over time", sc.title)
        },
        x_label: "time (s)".into(),
        y_label: sc.label(),
        shaded: warm_up(&r.intervals).into_iter().collect(),
        lines,
        ..Chart::default()
    })
}

/// The span of the omitted intervals.
fn warm_up(intervals: &[Interval]) -> Option<Shade> {
    let omitted = intervals.iter().filter(|i| i.omitted);
    let from = omitted.clone().map(|i| i.start).reduce(f64::min)?;
    let to = omitted.map(|i| i.end).reduce(f64::max)?;
    Some(Shade {
        from,
        to,
        label: "warm-up (omitted)".into(),
    })
}

/// (end, value) of every interval that has `metric`.
fn one(intervals: &[Interval], metric: &str) -> Result<Vec<(f64, f64)>, PlotError> {
    let values: Vec<(f64, f64)> = intervals
        .iter()
        .filter_map(|i| Some((i.end, metric::of_interval(i, metric)?)))
        .collect();
    if values.is_empty() {
        return Err(PlotError::IntervalsLack(metric.into()));
    }
    Ok(values)
}

/// Labelled lines of (x, y) points, before scaling.
type RawLines = Vec<(String, Vec<(f64, f64)>)>;

/// Data packets/s (data segments sent, over every flow) and ACK packets/s (each flow's data
/// segments over its data segments per ACK, where known), per interval.
fn packets(intervals: &[Interval]) -> Result<RawLines, PlotError> {
    let (mut data, mut acks) = (Vec::new(), Vec::new());
    for i in intervals {
        let len = i.end - i.start;
        if i.flows.is_empty() || len <= 0.0 {
            continue;
        }
        let segs: u64 = i.flows.iter().map(|f| f.data_segs_out).sum();
        data.push((i.end, segs as f64 / len));
        let acked = i.flows.iter().filter(|f| f.data_segs_per_ack > 0.0);
        if acked.clone().next().is_some() {
            let n: f64 = acked
                .map(|f| f.data_segs_out as f64 / f.data_segs_per_ack)
                .sum();
            acks.push((i.end, n / len));
        }
    }
    if data.iter().all(|(_, v)| *v == 0.0) {
        return Err(PlotError::NoSegmentCounts);
    }
    let mut lines = vec![("data packets".to_string(), data)];
    if !acks.is_empty() {
        lines.push(("ACK packets".to_string(), acks));
    }
    Ok(lines)
}
