//! Pure helpers that read a curve's shape: sizes and delays parsed from option values, the knee
//! (first x reaching a share of the best), the plateau (where larger x stop adding), best values,
//! percentage gains and scaling efficiency. Every helper returns `None` rather than a NaN or an
//! infinity when the data cannot answer (empty, zero, non-finite).

/// A size as typed on the command line: "256", "16K", "1.5M", "2G" (1024-based), in bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    fathom_units::size::parse(s).ok()
}

/// A delay as typed: "0ms", "50ms", "0.2s", "100us", "10" (milliseconds), in milliseconds.
pub fn parse_ms(s: &str) -> Option<f64> {
    let ns = fathom_units::duration::parse(s, fathom_units::duration::Bare::Millis).ok()?;
    Some(ns as f64 / 1e6)
}

/// Index of the largest finite value (the first of equals), if any value is finite.
pub fn best(ys: &[f64]) -> Option<usize> {
    ys.iter()
        .enumerate()
        .filter(|(_, y)| y.is_finite())
        .fold(None, |acc: Option<(usize, f64)>, (i, &y)| match acc {
            Some((_, b)) if b >= y => acc,
            _ => Some((i, y)),
        })
        .map(|(i, _)| i)
}

/// The knee: index of the first value reaching `frac` of the largest (0.95 = 95%). `None` when
/// there is no finite value or the largest is not positive (nothing moved).
pub fn knee(ys: &[f64], frac: f64) -> Option<usize> {
    let top = ys[best(ys)?];
    if top <= 0.0 {
        return None;
    }
    ys.iter().position(|&y| y >= frac * top)
}

/// What the values after index `i` add at most over `ys[i]`, as a fraction (0.04 = 4%), never
/// below 0. `None` when nothing follows `i` or `ys[i]` is not positive.
pub fn gain_above(ys: &[f64], i: usize) -> Option<f64> {
    let base = *ys.get(i)?;
    let rest = ys.get(i + 1..).filter(|r| !r.is_empty())?;
    let top = rest[best(rest)?];
    ratio(top, base).map(|r| (r - 1.0).max(0.0))
}

/// The plateau: index of the first value that no later value beats by `min_gain` or more (0.10 =
/// 10%). `None` when only the last value qualifies (the curve still climbs) or there is no
/// positive value.
pub fn plateau(ys: &[f64], min_gain: f64) -> Option<usize> {
    let last = ys.len().checked_sub(1)?;
    (0..last).find(|&i| gain_above(ys, i).is_some_and(|g| g < min_gain))
}

/// `to / from`, when both are finite and `from` is positive.
pub fn ratio(to: f64, from: f64) -> Option<f64> {
    (from > 0.0 && to.is_finite() && from.is_finite()).then(|| to / from)
}

/// The change from `from` to `to` in percent (+25.0 = a quarter more), when `from` is positive.
pub fn percent_gain(from: f64, to: f64) -> Option<f64> {
    ratio(to, from).map(|r| (r - 1.0) * 100.0)
}

/// Scaling efficiency from `(x0, y0)` to `(x1, y1)`: the speedup `y1 / y0` over the growth in
/// resources `x1 / x0` (1.0 = perfectly linear). `None` unless all are positive and finite.
pub fn scaling_efficiency(x0: f64, y0: f64, x1: f64, y1: f64) -> Option<f64> {
    Some(ratio(y1, y0)? / ratio(x1, x0)?)
}

/// What each added unit brings, as a share of the first unit's value: from `(x0, y0)` to
/// `(x1, y1)`, `(y1 - y0) / (x1 - x0) / (y0 / x0)`. `None` unless `x1 > x0` and all are positive.
pub fn marginal_share(x0: f64, y0: f64, x1: f64, y1: f64) -> Option<f64> {
    let per_unit = ratio(y0, x0)?;
    if x1 <= x0 || !y1.is_finite() {
        return None;
    }
    ratio((y1 - y0) / (x1 - x0), per_unit)
}

/// The mean of the finite values, if any.
pub fn mean(vs: &[f64]) -> Option<f64> {
    let f: Vec<f64> = vs.iter().copied().filter(|v| v.is_finite()).collect();
    (!f.is_empty()).then(|| f.iter().sum::<f64>() / f.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_delays_parse_as_typed() {
        assert_eq!(parse_size("16K"), Some(16384));
        assert_eq!(parse_size("256"), Some(256));
        assert_eq!(parse_size("1.5M"), Some(1_572_864));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("1x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_ms("50ms"), Some(50.0));
        assert_eq!(parse_ms("0.2s"), Some(200.0));
        assert_eq!(parse_ms("0ms"), Some(0.0));
        assert_eq!(parse_ms("fast"), None);
    }

    #[test]
    fn knee_best_and_plateau_read_the_curve() {
        let ys = [10.0, 20.0, 96.0, 100.0, 99.0];
        assert_eq!(best(&ys), Some(3));
        assert_eq!(knee(&ys, 0.95), Some(2));
        let g = gain_above(&ys, 2).unwrap();
        assert!((g - (100.0 / 96.0 - 1.0)).abs() < 1e-12);
        assert_eq!(gain_above(&ys, 4), None);
        assert_eq!(plateau(&ys, 0.10), Some(2));
        assert_eq!(plateau(&[1.0, 2.0, 4.0], 0.10), None);
    }

    #[test]
    fn degenerate_curves_give_none_not_nan() {
        assert_eq!(best(&[]), None);
        assert_eq!(knee(&[0.0, 0.0], 0.95), None);
        assert_eq!(knee(&[f64::NAN, 5.0], 0.95), Some(1));
        assert_eq!(gain_above(&[0.0, 1.0], 0), None);
        assert_eq!(plateau(&[3.0], 0.1), None);
        assert_eq!(plateau(&[3.0, 3.0, 3.0], 0.1), Some(0));
        assert_eq!(percent_gain(0.0, 5.0), None);
        assert_eq!(mean(&[f64::NAN]), None);
    }

    #[test]
    fn gains_and_efficiency_are_plain_arithmetic() {
        assert_eq!(percent_gain(80.0, 100.0), Some(25.0));
        assert_eq!(ratio(8.0, 2.0), Some(4.0));
        assert_eq!(scaling_efficiency(1.0, 10.0, 4.0, 30.0), Some(0.75));
        assert_eq!(marginal_share(1.0, 10.0, 4.0, 31.0), Some(0.7));
        assert_eq!(mean(&[1.0, 2.0, f64::INFINITY, 3.0]), Some(2.0));
    }
}
