//! Axis ranges and tick marks at round numbers (steps of 1, 2 or 5 times a power of ten), so that
//! the drawing code places every tick itself and the output never depends on a heuristic of the
//! plotting library.

use super::units::tick_label;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use std::ops::Range;

/// An axis: the drawn range and its labelled ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Lowest value drawn.
    pub lo: f64,
    /// Highest value drawn.
    pub hi: f64,
    /// Ticks as (position, label).
    pub ticks: Vec<(f64, String)>,
}

/// An axis as plotters' coordinate: linear over its range, with its ticks and their labels.
pub struct Ticked(pub Axis);

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = NoDefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(self.0.lo..self.0.hi).map(v, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.0.ticks.iter().map(|t| t.0).collect()
        }
    }

    fn range(&self) -> Range<f64> {
        self.0.lo..self.0.hi
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format_ext(&self, v: &f64) -> String {
        self.0
            .ticks
            .iter()
            .find(|(at, _)| (at - v).abs() <= 1e-9 * at.abs().max(1.0))
            .map_or_else(String::new, |(_, l)| l.clone())
    }
}

/// About this many ticks on an axis without given ones.
const TARGET_TICKS: f64 = 6.0;

/// A y axis from 0 (or below, for negative values) up to a round number above `max`.
pub fn y_axis(min: f64, max: f64) -> Axis {
    let lo = min.min(0.0);
    let hi = if max > lo { max } else { lo + 1.0 };
    let step = nice_step((hi - lo) / TARGET_TICKS);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    Axis {
        lo,
        hi,
        ticks: ticks(lo, hi, step, hi.abs().max(lo.abs())),
    }
}

/// A log y axis over `positions` (log10 of the values), with a margin and ticks at 1, 2, 5
/// (or 1) times the powers of ten.
pub fn log_y_axis(positions: impl Iterator<Item = f64>) -> Axis {
    let (lo, hi) = positions
        .filter(|v| v.is_finite())
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo > hi { (0.0, 1.0) } else { (lo, hi) };
    let pad = if hi > lo { (hi - lo) * 0.04 } else { 0.5 };
    let (lo, hi) = (lo - pad, hi + pad);
    Axis {
        lo,
        hi,
        ticks: log_ticks(lo, hi),
    }
}

/// An x axis over `min..=max` with a margin; `given` ticks are kept, else round ones are chosen.
/// On a log axis positions are log10 of the values (which must be positive).
pub fn x_axis(min: f64, max: f64, log: bool, given: &[(f64, String)]) -> Axis {
    let (lo, hi) = if log {
        (min.log10(), max.log10())
    } else {
        (min, max)
    };
    let span = hi - lo;
    let pad = if span > 0.0 { span * 0.04 } else { 0.5 };
    let pad = if log {
        pad
    } else {
        pad.max(0.3 * smallest_gap(given))
    };
    let (lo, hi) = (lo - pad, hi + pad);
    let ticks = if !given.is_empty() {
        given
            .iter()
            .map(|(x, l)| (if log { x.log10() } else { *x }, l.clone()))
            .filter(|(x, _)| x.is_finite())
            .collect()
    } else if log {
        log_ticks(lo, hi)
    } else {
        let step = nice_step((hi - lo) / TARGET_TICKS);
        ticks(lo, hi, step, hi.abs().max(lo.abs()))
    };
    Axis { lo, hi, ticks }
}

/// The smallest distance between two given ticks (0 for fewer than two): categories and
/// sparse sweeps get room for their first and last points.
fn smallest_gap(given: &[(f64, String)]) -> f64 {
    let mut xs: Vec<f64> = given
        .iter()
        .map(|t| t.0)
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .reduce(f64::min)
        .unwrap_or(0.0)
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let m = match raw / mag {
        n if n <= 1.0 + 1e-9 => 1.0,
        n if n <= 2.0 + 1e-9 => 2.0,
        n if n <= 5.0 + 1e-9 => 5.0,
        _ => 10.0,
    };
    m * mag
}

/// Every multiple of `step` within `lo..=hi`, labelled.
fn ticks(lo: f64, hi: f64, step: f64, largest: f64) -> Vec<(f64, String)> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            (v, tick_label(v, step, largest))
        })
        .collect()
}

/// Ticks of a log10 axis spanning `lo..=hi` (in log10 units): each power of ten, and 2 and 5
/// times it when fewer than three decades show.
fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let mults: &[f64] = if hi - lo < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    for decade in lo.floor() as i32..=hi.ceil() as i32 {
        for m in mults {
            let v = m * 10f64.powi(decade);
            let at = v.log10();
            if at >= lo && at <= hi {
                out.push((at, tick_label(v, v, v)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y_axes_start_at_zero_and_end_on_a_round_number() {
        let a = y_axis(3.0, 9.41);
        assert_eq!((a.lo, a.hi), (0.0, 10.0));
        assert_eq!(a.ticks.first().map(|t| t.1.as_str()), Some("0"));
        assert_eq!(a.ticks.last().map(|t| t.1.as_str()), Some("10"));
        assert_eq!(y_axis(0.0, 0.0).hi, 1.0);
    }

    #[test]
    fn x_axes_keep_given_ticks_and_take_logs() {
        let given = vec![(16384.0, "16K".to_string()), (1048576.0, "1M".to_string())];
        let a = x_axis(16384.0, 1048576.0, true, &given);
        assert!((a.ticks[1].0 - 1048576f64.log10()).abs() < 1e-12);
        assert!(a.lo < 16384f64.log10() && a.hi > 1048576f64.log10());
        let auto = x_axis(1.0, 4.0, false, &[]);
        let labels: Vec<&str> = auto.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "2", "3", "4"]);
        let log = x_axis(10.0, 100_000.0, true, &[]);
        let labels: Vec<&str> = log.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["10", "100", "1000", "10k", "100k"]);
    }
}
