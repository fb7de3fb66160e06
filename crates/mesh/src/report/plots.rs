//! Each pair's history as a chart: its figure over time, the band each run was judged
//! against (its low and high ends; none while the pair is learning), and the spans its alert
//! was raised, shaded. Every chart of
//! a page shares one clock ([`Clock`]), so that a change at one moment lines up across pairs.
//! A test with more pairs than [`MAX_CHARTS`] draws the alerting ones first, then those that
//! changed most.

use super::history::{alert_spans, thinned, PairHistory};
use crate::status::matrix::figure;
use crate::status::{PairStatus, TestStatus};
use fathom_report::html::{charts, esc};
use fathom_report::listing::when;
use fathom_report::plot::{scale, Chart, Line, Mark, PlotPoint, Shade, Stroke};

/// The most charts drawn for one test.
pub const MAX_CHARTS: usize = 40;

/// The x axis every chart of a page shares: seconds, minutes or hours since the first run.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    /// The first run shown, Unix seconds.
    pub t0: f64,
    /// Seconds per unit of the axis.
    pub unit_s: f64,
    /// The unit's name, plural.
    pub unit: &'static str,
}

impl Clock {
    /// The clock of runs from `first` to `last`, Unix seconds.
    pub fn new(first: f64, last: f64) -> Clock {
        let (unit_s, unit) = match last - first {
            s if s <= 180.0 => (1.0, "seconds"),
            s if s <= 3.0 * 3600.0 => (60.0, "minutes"),
            _ => (3600.0, "hours"),
        };
        Clock {
            t0: first,
            unit_s,
            unit,
        }
    }

    /// Unix time `t` on the axis.
    fn x(&self, t: f64) -> f64 {
        (t - self.t0) / self.unit_s
    }

    /// The axis label.
    fn label(&self) -> String {
        format!("{} since {} UTC", self.unit, when(self.t0))
    }
}

/// The history section of test `t`: a chart per pair of `histories` (those of `t`), the
/// latest status of each from `pairs`.
pub fn section(
    t: &TestStatus,
    histories: &[&PairHistory],
    pairs: &[&PairStatus],
    clock: &Clock,
) -> String {
    let mut h = format!(
        "<section class=\"history\" id=\"history-{}\">\n<h2>{}: each pair over time</h2>\n",
        esc(&t.name),
        esc(&t.name)
    );
    if histories.is_empty() {
        h.push_str("<p class=\"note\">No runs of this test in the span shown.</p>\n");
        h.push_str("</section>\n");
        return h;
    }
    let latest = |hist: &PairHistory| {
        pairs
            .iter()
            .find(|p| p.source == hist.source && p.target == hist.target)
            .copied()
    };
    let mut order: Vec<(&PairHistory, Option<&PairStatus>)> =
        histories.iter().map(|hist| (*hist, latest(hist))).collect();
    order.sort_by(|a, b| rank(a.1).total_cmp(&rank(b.1)));
    if order.len() > MAX_CHARTS {
        h.push_str(&format!(
            "<p class=\"note\">{} pairs; the {MAX_CHARTS} drawn are the alerting ones, then those that changed most.</p>\n",
            order.len()
        ));
        order.truncate(MAX_CHARTS);
    }
    let list = order
        .iter()
        .map(|(hist, p)| Ok(chart(t, hist, *p, clock)))
        .collect();
    h.push_str(&charts(list, &[]));
    h.push_str("</section>\n");
    h
}

/// Where a pair's chart goes: alerting first, then by the size of its change.
fn rank(p: Option<&PairStatus>) -> f64 {
    match p {
        Some(p) if p.alert => f64::NEG_INFINITY,
        Some(p) => -p.change_percent.map_or(0.0, f64::abs),
        None => 0.0,
    }
}

/// The chart of one pair.
fn chart(t: &TestStatus, hist: &PairHistory, p: Option<&PairStatus>, clock: &Clock) -> Chart {
    let points = thinned(&hist.points);
    let largest = points
        .iter()
        .flat_map(|p| [p.value, p.band_high])
        .flatten()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    let sc = scale(&t.figure, largest);
    let line =
        |label: &str, color, stroke, pick: &dyn Fn(&super::history::Point) -> Option<f64>| Line {
            label: label.to_string(),
            points: points
                .iter()
                .filter_map(|q| {
                    let y = pick(q)?;
                    Some(PlotPoint {
                        x: clock.x(q.at_unix_s),
                        y: y * sc.factor,
                        error: None,
                    })
                })
                .collect(),
            color: Some(color),
            stroke,
            mark: Mark::Circle,
        };
    let span_s = 0.005 * (last_time(hist) - clock.t0).max(clock.unit_s);
    let shaded = alert_spans(&hist.points, span_s)
        .into_iter()
        .map(|(from, to)| Shade {
            from: clock.x(from),
            to: clock.x(to),
            label: "alert raised".into(),
        })
        .collect();
    Chart {
        title: format!("{} → {}", hist.source, hist.target),
        notes: vec![note(t, hist, p)],
        x_label: clock.label(),
        y_label: sc.label(),
        shaded,
        lines: vec![
            line(&sc.title, 0, Stroke::Solid, &|q| q.value),
            line("band, high end", 7, Stroke::Dotted, &|q| q.band_high),
            line("band, low end", 7, Stroke::Dashed, &|q| q.band_low),
        ]
        .into_iter()
        .enumerate()
        .filter(|(i, l)| *i == 0 || !l.points.is_empty())
        .map(|(_, l)| l)
        .collect(),
        ..Chart::default()
    }
}

/// When the pair's latest run started, Unix seconds.
fn last_time(hist: &PairHistory) -> f64 {
    hist.points.last().map_or(0.0, |p| p.at_unix_s)
}

/// "rr h1 → h2: 120 runs shown, 2 failed; latest 60.3 ms, +202%, alert raised".
fn note(t: &TestStatus, hist: &PairHistory, p: Option<&PairStatus>) -> String {
    let failed = hist.points.iter().filter(|q| q.value.is_none()).count();
    let mut s = format!(
        "{} {} → {}: {} runs shown, {failed} failed",
        t.name,
        hist.source,
        hist.target,
        hist.points.len()
    );
    if let Some(p) = p {
        if let Some(v) = p.value {
            s.push_str(&format!("; latest {}", figure(&t.figure, v)));
        }
        if let Some(c) = p.change_percent {
            s.push_str(&format!(", {c:+.0}% against its baseline"));
        }
        if p.alert {
            s.push_str(", alert raised");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::history::Point;

    #[test]
    fn the_clock_picks_a_unit_for_the_span() {
        assert_eq!(Clock::new(100.0, 160.0).unit, "seconds");
        assert_eq!(Clock::new(0.0, 3600.0).unit, "minutes");
        assert_eq!(Clock::new(0.0, 86_400.0).unit, "hours");
        assert_eq!(Clock::new(0.0, 3600.0).x(1800.0), 30.0);
    }

    #[test]
    fn a_pair_s_chart_has_its_figure_its_band_and_its_alerts() {
        let t = TestStatus {
            name: "rr".into(),
            figure: "latency_p50_us".into(),
            ..TestStatus::default()
        };
        let at = |s: f64, v: f64, alert: bool| Point {
            at_unix_s: 1000.0 + s,
            value: Some(v),
            band_low: Some(90.0),
            band_high: Some(110.0),
            alert,
        };
        let hist = PairHistory {
            test: "rr".into(),
            source: "a".into(),
            target: "b".into(),
            points: vec![
                at(0.0, 100.0, false),
                at(1.0, 300.0, true),
                at(2.0, 100.0, false),
            ],
        };
        let c = chart(&t, &hist, None, &Clock::new(1000.0, 1002.0));
        assert_eq!(c.title, "a → b");
        assert_eq!(c.lines.len(), 3);
        assert_eq!(c.lines[0].points[1].y, 300.0);
        assert_eq!(c.shaded.len(), 1);
        assert_eq!((c.shaded[0].from, c.shaded[0].to), (1.0, 2.0));
        assert!(
            c.notes[0].contains("3 runs shown, 0 failed"),
            "{:?}",
            c.notes
        );
        let mut learning = hist.clone();
        for p in learning.points.iter_mut() {
            (p.band_low, p.band_high, p.alert) = (None, None, false);
        }
        let c = chart(&t, &learning, None, &Clock::new(1000.0, 1002.0));
        assert_eq!(c.lines.len(), 1, "no band while learning");
        assert!(c.shaded.is_empty());
    }
}
