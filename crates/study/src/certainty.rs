//! How far a study's data can be trusted, computed from the points' confidence intervals: the
//! sentence every study's findings end with, so that a finding is never read as more certain
//! than the measurements behind it.

use crate::say;
use fathom_report::series::{Point, Series};
use fathom_report::table_series::params_text;

/// A point whose interval's half-width exceeds this share of its mean is called uncertain.
pub const WIDE: f64 = 0.10;

/// The caution (or the reassurance) for these series' main figures; `None` without data.
pub fn certainty(series: &[Series]) -> Option<String> {
    let mut measured = 0;
    let mut once = 0;
    let mut wide: Vec<(&Point, f64, f64)> = Vec::new();
    let mut widest: Option<(&Point, f64, f64)> = None;
    for s in series {
        for p in s.points.iter().filter(|p| p.error.is_none()) {
            let Some(st) = p.metric(&s.primary_metric).filter(|st| st.n > 0) else {
                continue;
            };
            measured += 1;
            if st.n < 2 {
                once += 1;
                continue;
            }
            let half = st.relative_width() / 2.0;
            if half > WIDE {
                wide.push((p, half, st.ci_level));
            }
            if widest.is_none_or(|w| half > w.1) {
                widest = Some((p, half, st.ci_level));
            }
        }
    }
    if measured == 0 {
        return None;
    }
    if once == measured {
        return Some(
            "Certainty: each point ran once, so there are no confidence intervals and differences of a few percent may be noise; repeat points with the full form or --iterations."
                .to_string(),
        );
    }
    let (p, half, level) = widest?;
    let at = format!("{}, at {}", say::percent(half * 100.0), params_text(p));
    Some(if wide.is_empty() {
        format!(
            "Certainty: every repeated point's {} interval is within ±{:.0}% of its mean (widest ±{at}).",
            say::percent(level * 100.0),
            WIDE * 100.0
        )
    } else {
        format!(
            "Certainty: {} of {} repeated points have {} intervals wider than ±{:.0}% of their mean (widest ±{at}); differences smaller than that are within the noise of this machine.",
            wide.len(),
            measured - once,
            say::percent(level * 100.0),
            WIDE * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_report::series::{MetricStat, Param};
    use fathom_report::stats::describe;

    fn series(samples: &[&[f64]]) -> Series {
        Series {
            primary_metric: "bits_per_second".into(),
            points: samples
                .iter()
                .enumerate()
                .map(|(i, v)| Point {
                    params: vec![Param {
                        name: "buffer".into(),
                        value: format!("{}K", 16 << i),
                    }],
                    metrics: vec![MetricStat {
                        name: "bits_per_second".into(),
                        stat: describe(v, 0.95),
                    }],
                    ..Point::default()
                })
                .collect(),
            ..Series::default()
        }
    }

    #[test]
    fn wide_intervals_are_named_with_the_widest_point() {
        // 100 ± 1: t(0.95, 2) · 1/√3 = 2.48 → ±2.5%; 100 with 50..150: ±124%.
        let s = series(&[&[99.0, 100.0, 101.0], &[50.0, 100.0, 150.0]]);
        assert_eq!(
            certainty(&[s]).unwrap(),
            "Certainty: 1 of 2 repeated points have 95% intervals wider than ±10% of their mean (widest ±124%, at buffer=32K); differences smaller than that are within the noise of this machine."
        );
    }

    #[test]
    fn narrow_intervals_reassure_and_single_runs_warn() {
        let s = series(&[&[99.0, 100.0, 101.0], &[199.0, 200.0, 201.0]]);
        assert_eq!(
            certainty(&[s]).unwrap(),
            "Certainty: every repeated point's 95% interval is within ±10% of its mean (widest ±2.5%, at buffer=16K)."
        );
        let once = series(&[&[1.0], &[2.0]]);
        assert!(certainty(&[once])
            .unwrap()
            .starts_with("Certainty: each point ran once"));
        assert_eq!(certainty(&[series(&[])]), None);
    }
}
