//! A series' section of the HTML report: what was swept, the table of points (the primary
//! metric's mean and confidence interval, min, median, max) and the sweep charts.

use super::{charts, esc, table};
use crate::plot::units::scale;
use crate::plot::{iteration_chart, latency_chart, sweep_chart};
use crate::series::Series;
use crate::table_series::cell;

/// The section of series `s`, headed `title`, charted against the option `x_axis` (its main
/// figure, then `more` figures, then the latency percentiles if it has them), or, when it
/// sweeps nothing, run by run.
pub fn section(title: &str, s: &Series, x_axis: &str, more: &[String]) -> String {
    let mut h = format!("<section>\n<h2>{}</h2>\n", esc(title));
    h.push_str(&format!("<p class=\"meta\">{}</p>\n", esc(&describe(s))));
    h.push_str(&points(s));
    let mut list = Vec::new();
    if s.axes.is_empty() {
        list.push(iteration_chart(s));
    } else {
        let metrics = std::iter::once(&s.primary_metric).chain(more);
        list.extend(metrics.map(|m| sweep_chart(s, x_axis, m)));
        let latency = s
            .points
            .iter()
            .any(|p| p.metric(crate::metric::rr::LATENCY_P50_US.name).is_some());
        if latency {
            list.push(latency_chart(s, x_axis));
        }
    }
    h.push_str(&charts(list, &crate::about::series_lines(s)));
    h.push_str("</section>\n");
    h
}

/// "stream -t 10; sweeps buffer (4), parallel (2); up to 5 iterations per point, 95% intervals".
fn describe(s: &Series) -> String {
    let mut text = if s.args.is_empty() {
        s.kind.clone()
    } else {
        s.args.join(" ")
    };
    let axes: Vec<String> = s
        .axes
        .iter()
        .map(|a| format!("{} ({})", a.name, a.values.len()))
        .collect();
    if !axes.is_empty() {
        text.push_str(&format!("; sweeps {}", axes.join(", ")));
    }
    text.push_str(&match (s.iterations, &s.confidence) {
        (1, _) => "; one run per point".to_string(),
        (n, Some(_)) => format!("; up to {n} iterations per point"),
        (n, None) => format!("; {n} iterations per point"),
    });
    if let Some(level) = s
        .points
        .iter()
        .flat_map(|p| &p.metrics)
        .map(|m| m.stat.ci_level)
        .next()
    {
        text.push_str(&format!(", {:.0}% confidence intervals", level * 100.0));
    }
    if !s.complete {
        text.push_str("; incomplete");
    }
    text
}

/// The table of points: each swept value, n, the primary metric and the error.
fn points(s: &Series) -> String {
    let metric = s.primary_metric.as_str();
    let largest = s
        .points
        .iter()
        .filter_map(|p| p.metric(metric))
        .map(|st| st.max.abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let sc = scale(metric, largest);
    let mut head: Vec<(String, bool)> = s.axes.iter().map(|a| (a.name.clone(), false)).collect();
    head.push(("n".into(), true));
    head.push((format!("{} mean ± CI", sc.label()), true));
    for h in ["min", "median", "max"] {
        head.push((h.into(), true));
    }
    let extras = crate::table_series::extras(s);
    head.extend(extras.iter().map(|(_, title)| (title.to_string(), true)));
    head.push(("error".into(), false));
    let rows: Vec<Vec<(String, bool)>> = s
        .points
        .iter()
        .map(|p| {
            let mut row: Vec<(String, bool)> = s
                .axes
                .iter()
                .map(|a| (p.param(&a.name).unwrap_or("").to_string(), false))
                .collect();
            let f = sc.factor;
            match p.metric(metric).filter(|st| st.n > 0) {
                Some(st) => {
                    let half = (st.ci_high - st.ci_low) / 2.0 * f;
                    row.push((st.n.to_string(), true));
                    let mean = if st.n > 1 {
                        format!("{} ± {}", num(st.mean * f), num(half))
                    } else {
                        num(st.mean * f)
                    };
                    row.push((mean, true));
                    row.extend([st.min, st.median, st.max].map(|v| (num(v * f), true)));
                }
                None => row.extend((0..5).map(|_| (String::new(), true))),
            }
            row.extend(extras.iter().map(|(m, _)| {
                let v = p.metric(m).filter(|st| st.n > 0);
                (v.map_or(String::new(), |st| cell(m, st.mean)), true)
            }));
            row.push((p.error.clone().unwrap_or_default(), false));
            row
        })
        .collect();
    table("points", &head, &rows)
}

/// Three or four significant digits.
fn num(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}
