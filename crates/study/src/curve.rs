//! A series read as curves: the points that share some option values, ordered along one axis,
//! with one metric's mean. Failed points (error set), points without the metric and points whose
//! x value does not parse are left out, so findings only ever see real numbers.

use fathom_report::series::{Point, Series};

/// One line of a chart: x as typed, x as a number, and the metric's mean there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    /// The x values as typed ("48K").
    pub labels: Vec<String>,
    /// The x values as numbers (bytes, ms, counts).
    pub xs: Vec<f64>,
    /// The metric's mean at each x.
    pub ys: Vec<f64>,
}

impl Curve {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.ys.len()
    }

    /// True when no point made it.
    pub fn is_empty(&self) -> bool {
        self.ys.is_empty()
    }

    /// The y value at x label `label`.
    pub fn at(&self, label: &str) -> Option<f64> {
        self.labels
            .iter()
            .position(|l| l == label)
            .map(|i| self.ys[i])
    }
}

/// The values of axis `name`, in the axis's order; from the points when the axis is not listed.
pub fn values(series: &Series, name: &str) -> Vec<String> {
    if let Some(axis) = series.axes.iter().find(|a| a.name == name) {
        return axis.values.clone();
    }
    let mut out: Vec<String> = Vec::new();
    for v in series.points.iter().filter_map(|p| p.param(name)) {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_string());
        }
    }
    out
}

/// The mean of `metric` at a point that ran without error, when finite.
pub fn metric(point: &Point, metric: &str) -> Option<f64> {
    if point.error.is_some() {
        return None;
    }
    point
        .metric(metric)
        .filter(|s| s.n > 0)
        .map(|s| s.mean)
        .filter(|m| m.is_finite())
}

/// The successful point whose options include every `(name, value)` of `at`.
pub fn point<'a>(series: &'a Series, at: &[(&str, &str)]) -> Option<&'a Point> {
    series
        .points
        .iter()
        .find(|p| p.error.is_none() && at.iter().all(|(n, v)| p.param(n) == Some(*v)))
}

/// The curve of `metric` along axis `x` over the points matching `fixed`, x parsed by `parse`.
pub fn curve(
    series: &Series,
    x: &str,
    metric_name: &str,
    fixed: &[(&str, &str)],
    parse: fn(&str) -> Option<f64>,
) -> Curve {
    let mut c = Curve::default();
    for label in values(series, x) {
        let mut at = fixed.to_vec();
        at.push((x, &label));
        let y = point(series, &at).and_then(|p| metric(p, metric_name));
        if let (Some(y), Some(xv)) = (y, parse(&label)) {
            c.labels.push(label.clone());
            c.xs.push(xv);
            c.ys.push(y);
        }
    }
    c
}

/// A size value ("48K") as bytes.
pub fn size_x(s: &str) -> Option<f64> {
    crate::shape::parse_size(s).map(|b| b as f64)
}

/// A plain number ("10").
pub fn number_x(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}
