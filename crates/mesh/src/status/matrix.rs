//! The status as the terminal shows it: a headline (members, alerts, the likely culprit), then
//! per test a matrix of sources (rows) by targets (columns), each cell the latest figure, its
//! change against the baseline and `ALERT` while the pair's alert is raised; members down are
//! marked `(down)`. A mesh of more than [`MATRIX_MAX`] members lists its alerting pairs instead.

use super::{PairStatus, Status, TestStatus};
use fathom_report::table_series::cell;

/// The most members shown as a matrix.
pub const MATRIX_MAX: usize = 16;

/// The status as text.
pub fn render(s: &Status) -> String {
    let mut out = vec![headline(s)];
    for t in &s.tests {
        out.push(String::new());
        out.push(test_line(t));
        let pairs: Vec<&PairStatus> = s.pairs.iter().filter(|p| p.test == t.name).collect();
        if pairs.is_empty() {
            out.push("  no runs stored yet".into());
        } else if s.members.len() <= MATRIX_MAX {
            out.extend(matrix(s, t, &pairs));
        } else {
            out.extend(alerting(t, &pairs));
        }
    }
    out.push(String::new());
    out.join("\n")
}

/// "mesh lab: 5 members (1 down), 2 tests, 4 alerts; likely culprit: h3 (4 of 4 partners)".
fn headline(s: &Status) -> String {
    let down = s.members.iter().filter(|m| m.down).count();
    let mut line = format!(
        "mesh {}: {} members{}, {} tests, {} alert{}",
        s.mesh,
        s.members.len(),
        if down > 0 {
            format!(" ({down} down)")
        } else {
            String::new()
        },
        s.tests.len(),
        s.alerts,
        if s.alerts == 1 { "" } else { "s" }
    );
    if !s.culprits.is_empty() {
        let named: Vec<String> = s
            .culprits
            .iter()
            .map(|c| {
                format!(
                    "{} (alerts with {} of {} partners)",
                    c.member, c.alerting, c.partners
                )
            })
            .collect();
        line.push_str(&format!("; likely culprit: {}", named.join(", ")));
    }
    for m in s.members.iter().filter(|m| m.down) {
        let why = m.reason.as_deref().unwrap_or("unreachable");
        line.push_str(&format!("\n  {} is down: {why}", m.name));
    }
    line
}

/// "rr: latency_p50_us, normal, every 1 s (started 118, skipped 2, member down 0)".
fn test_line(t: &TestStatus) -> String {
    let counts = t.counts.as_ref().map_or(String::new(), |c| {
        format!(
            " (started {}, skipped {}, member down {})",
            c.started, c.skipped, c.down
        )
    });
    format!(
        "{}: {} ({} is worse), {}, every {} s{counts}",
        t.name,
        t.figure,
        if t.higher_is_worse { "higher" } else { "lower" },
        t.class,
        t.every_s
    )
}

/// The matrix of one test.
fn matrix(s: &Status, t: &TestStatus, pairs: &[&PairStatus]) -> Vec<String> {
    let label = |name: &str| match s.members.iter().any(|m| m.name == name && m.down) {
        true => format!("{name} (down)"),
        false => name.to_string(),
    };
    let names: Vec<&str> = s.members.iter().map(|m| m.name.as_str()).collect();
    let mut rows = vec![std::iter::once("source \\ target".to_string())
        .chain(names.iter().map(|n| label(n)))
        .collect::<Vec<_>>()];
    for src in &names {
        let mut row = vec![label(src)];
        for dst in &names {
            let p = pairs.iter().find(|p| p.source == *src && p.target == *dst);
            row.push(match (src == dst, p) {
                (true, _) => "·".into(),
                (false, None) => "-".into(),
                (false, Some(p)) => pair_cell(t, p),
            });
        }
        rows.push(row);
    }
    align(&rows)
}

/// A mesh too large for a matrix: its alerting pairs, one a line.
fn alerting(t: &TestStatus, pairs: &[&PairStatus]) -> Vec<String> {
    let raised: Vec<String> = pairs
        .iter()
        .filter(|p| p.alert)
        .map(|p| format!("  {} -> {}: {}", p.source, p.target, pair_cell(t, p)))
        .collect();
    match raised.is_empty() {
        true => vec![format!("  {} pairs, no alert", pairs.len())],
        false => raised,
    }
}

/// "20.1 ms +3%", "60.3 ms +201% ALERT", "failed", "learning".
fn pair_cell(t: &TestStatus, p: &PairStatus) -> String {
    let value = match p.value {
        Some(v) => figure(&t.figure, v),
        None if p.runs > 0 => "failed".into(),
        None => "-".into(),
    };
    let change = match (p.change_percent, p.baseline) {
        (Some(c), _) => format!(" {c:+.0}%"),
        (None, None) if p.value.is_some() => " (learning)".into(),
        _ => String::new(),
    };
    let mark = if p.alert { " ALERT" } else { "" };
    format!("{value}{change}{mark}")
}

/// A figure in its unit: times from µs, rates in bit/s, percentages.
pub fn figure(metric: &str, v: f64) -> String {
    if metric.ends_with("_us") {
        if v < 999.5 {
            format!("{v:.0} µs")
        } else {
            format!("{:.1} ms", v / 1000.0)
        }
    } else if metric.ends_with("_percent") {
        format!("{v:.2}%")
    } else {
        cell(metric, v)
    }
}

/// Rows padded into columns two spaces apart.
fn align(rows: &[Vec<String>]) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .zip(&width)
                .map(|(s, w)| format!("{s:<w$}"))
                .collect();
            format!("  {}", cells.join("  ").trim_end())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{Culprit, MemberStatus};

    #[test]
    fn the_matrix_marks_alerts_members_down_and_the_culprit() {
        let mut s = Status::new("lab", 0.0);
        for (n, down) in [("h1", false), ("h2", false), ("h3", true)] {
            s.members.push(MemberStatus {
                name: n.into(),
                down,
                reason: down.then(|| "connection refused".into()),
                ..MemberStatus::default()
            });
        }
        s.tests.push(TestStatus {
            name: "rr".into(),
            figure: "latency_p50_us".into(),
            higher_is_worse: true,
            class: "normal".into(),
            every_s: 1.0,
            ..TestStatus::default()
        });
        s.pairs.push(PairStatus {
            test: "rr".into(),
            source: "h1".into(),
            target: "h2".into(),
            runs: 20,
            value: Some(60_300.0),
            baseline: Some(20_000.0),
            change_percent: PairStatus::change(Some(60_300.0), Some(20_000.0)),
            alert: true,
            ..PairStatus::default()
        });
        s.finish(3);
        s.culprits.push(Culprit {
            member: "h2".into(),
            alerting: 4,
            partners: 4,
        });
        let text = render(&s);
        assert!(
            text.contains("3 members (1 down), 1 tests, 1 alert;"),
            "{text}"
        );
        assert!(
            text.contains("likely culprit: h2 (alerts with 4 of 4 partners)"),
            "{text}"
        );
        assert!(text.contains("h3 is down: connection refused"), "{text}");
        assert!(text.contains("60.3 ms +202% ALERT"), "{text}");
        assert!(text.contains("h3 (down)"), "{text}");
    }

    #[test]
    fn figures_are_shown_in_their_units() {
        assert_eq!(figure("latency_p50_us", 812.0), "812 µs");
        assert_eq!(figure("latency_p50_us", 48_200.0), "48.2 ms");
        assert_eq!(figure("bits_per_second", 940.1e6), "940.1 Mbit/s");
        assert_eq!(figure("lost_percent", 2.0), "2.00%");
    }
}
