//! A pair's history as the report plots it: each stored run's time, figure, band and alert,
//! grouped by (test, source, target); the spans its alert was raised; and the points a plot
//! keeps when a pair has more runs than a chart can show.

use std::collections::BTreeMap;

/// The most points a pair's chart draws; a longer history keeps evenly spaced ones, and
/// every run that raised or cleared the alert.
pub const MAX_POINTS: usize = 400;

/// One stored run of a pair.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// When it started, Unix seconds.
    pub at_unix_s: f64,
    /// Its figure; none when it failed.
    pub value: Option<f64>,
    /// The band's low end it was judged against; none while learning.
    pub band_low: Option<f64>,
    /// The band's high end.
    pub band_high: Option<f64>,
    /// True when the pair's alert was raised after it.
    pub alert: bool,
}

/// The runs of one pair of one test, oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairHistory {
    /// The test's name.
    pub test: String,
    /// The member that ran the connecting end.
    pub source: String,
    /// The member it tested.
    pub target: String,
    /// Its runs, oldest first.
    pub points: Vec<Point>,
}

/// (test, source, target): which pair a run belongs to.
pub type PairKey = (String, String, String);

/// Runs grouped into one history per pair, by test, source and target; each history oldest
/// first.
pub fn group(runs: impl IntoIterator<Item = (PairKey, Point)>) -> Vec<PairHistory> {
    let mut by: BTreeMap<PairKey, Vec<Point>> = BTreeMap::new();
    for (key, p) in runs {
        by.entry(key).or_default().push(p);
    }
    by.into_iter()
        .map(|((test, source, target), mut points)| {
            points.sort_by(|a, b| a.at_unix_s.total_cmp(&b.at_unix_s));
            PairHistory {
                test,
                source,
                target,
                points,
            }
        })
        .collect()
}

/// The spans (from, to), Unix seconds, in which the alert was raised: from the run that raised
/// it to the run that cleared it, or to the latest run while it is still raised; a span is at
/// least `min_width` wide, so that one alerting run still shows.
pub fn alert_spans(points: &[Point], min_width: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut from: Option<f64> = None;
    for p in points {
        match (from, p.alert) {
            (None, true) => from = Some(p.at_unix_s),
            (Some(f), false) => {
                out.push((f, p.at_unix_s));
                from = None;
            }
            _ => {}
        }
    }
    if let (Some(f), Some(last)) = (from, points.last()) {
        out.push((f, last.at_unix_s));
    }
    out.into_iter()
        .map(|(f, t)| (f, t.max(f + min_width)))
        .collect()
}

/// At most about [`MAX_POINTS`] of `points`: all of them when they fit, else evenly spaced
/// ones plus each run whose alert differs from the run before it.
pub fn thinned(points: &[Point]) -> Vec<Point> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let stride = points.len().div_ceil(MAX_POINTS);
    points
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            i % stride == 0 || *i + 1 == points.len() || (*i > 0 && points[i - 1].alert != p.alert)
        })
        .map(|(_, p)| *p)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: f64, alert: bool) -> Point {
        Point {
            at_unix_s: t,
            value: Some(1.0),
            alert,
            ..Point::default()
        }
    }

    #[test]
    fn runs_are_grouped_by_pair_oldest_first() {
        let key = |s: &str, t: &str| ("rr".to_string(), s.to_string(), t.to_string());
        let h = group([
            (key("b", "a"), at(3.0, false)),
            (key("a", "b"), at(2.0, false)),
            (key("a", "b"), at(1.0, false)),
        ]);
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].source.as_str(), h[0].target.as_str()), ("a", "b"));
        assert_eq!(h[0].points[0].at_unix_s, 1.0);
        assert_eq!(h[1].points.len(), 1);
    }

    #[test]
    fn alert_spans_run_from_raised_to_cleared_or_the_latest_run() {
        let p = [
            at(0.0, false),
            at(1.0, true),
            at(2.0, true),
            at(3.0, false),
            at(4.0, true),
        ];
        assert_eq!(alert_spans(&p, 0.5), vec![(1.0, 3.0), (4.0, 4.5)]);
        assert!(alert_spans(&p[..1], 0.5).is_empty());
    }

    #[test]
    fn a_long_history_is_thinned_keeping_every_change_of_alert() {
        let p: Vec<Point> = (0..4000).map(|i| at(i as f64, i == 1001)).collect();
        let t = thinned(&p);
        assert!(t.len() <= MAX_POINTS + 3, "{}", t.len());
        assert!(t.iter().any(|p| p.alert), "the raising run is kept");
        assert!(
            t.iter().any(|p| p.at_unix_s == 1002.0),
            "so is the clearing one"
        );
        assert_eq!(t.last().map(|p| p.at_unix_s), Some(3999.0));
        assert_eq!(thinned(&p[..10]).len(), 10);
    }
}
