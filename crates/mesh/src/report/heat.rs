//! The heat-map of one test: sources (rows) by targets (columns), each cell coloured by its
//! latest figure's change against the pair's baseline (worse or better by how much, in the
//! test's own sense of worse), alerts outlined and marked, members down marked in their row
//! and column, and a tooltip with the figure, the band and the counts. A mesh of more than
//! [`HEAT_MAX`] members lists its alerting pairs instead.

use crate::status::matrix::figure;
use crate::status::{PairStatus, Status, TestStatus};
use fathom_report::html::esc;
use fathom_report::listing::when;

/// The most members drawn as a heat-map.
pub const HEAT_MAX: usize = 64;

/// The tones a cell takes, with what each means: the legend under the heat-maps.
pub const TONES: [(&str, &str); 10] = [
    ("better-3", "better by 50% or more"),
    ("better-2", "better by 20–50%"),
    ("better-1", "better by 5–20%"),
    ("same", "within 5% of the baseline"),
    ("worse-1", "worse by 5–20%"),
    ("worse-2", "worse by 20–50%"),
    ("worse-3", "worse by 50% or more"),
    ("learning", "no baseline yet (learning)"),
    ("failed", "the latest run failed"),
    ("none", "no run stored"),
];

/// The tone of pair `p`'s cell: its change turned so that positive is worse, in bands.
pub fn tone(t: &TestStatus, p: &PairStatus) -> &'static str {
    if p.value.is_none() {
        return if p.runs > 0 { "failed" } else { "none" };
    }
    let Some(change) = p.change_percent else {
        return "learning";
    };
    let worse = if t.higher_is_worse { change } else { -change };
    let step = match worse.abs() {
        a if a < 5.0 => return "same",
        a if a < 20.0 => 1,
        a if a < 50.0 => 2,
        _ => 3,
    };
    match (worse > 0.0, step) {
        (true, 1) => "worse-1",
        (true, 2) => "worse-2",
        (true, _) => "worse-3",
        (false, 1) => "better-1",
        (false, 2) => "better-2",
        (false, _) => "better-3",
    }
}

/// The heat-map of test `t` (its pairs are `pairs`), or its alerting pairs in a large mesh.
pub fn section(s: &Status, t: &TestStatus, pairs: &[&PairStatus]) -> String {
    let mut h = format!(
        "<section class=\"heat\" id=\"heat-{}\">\n<h2>{}: {} ({} is worse)</h2>\n",
        esc(&t.name),
        esc(&t.name),
        esc(&t.figure),
        if t.higher_is_worse { "higher" } else { "lower" }
    );
    h.push_str(&format!("<p class=\"meta\">{}</p>\n", esc(&about(t))));
    if pairs.is_empty() {
        h.push_str("<p class=\"note\">No runs of this test are stored yet.</p>\n");
    } else if s.members.len() > HEAT_MAX {
        h.push_str(&alerting(t, pairs));
    } else {
        h.push_str(&matrix(s, t, pairs));
    }
    h.push_str("</section>\n");
    h
}

/// "rr, normal, every 1 s; started 118, skipped 2, not tried (member down) 0".
fn about(t: &TestStatus) -> String {
    let counts = t.counts.as_ref().map_or(String::new(), |c| {
        format!(
            "; started {}, skipped {}, not tried (member down) {}",
            c.started, c.skipped, c.down
        )
    });
    format!("{}, {}, every {} s{counts}", t.kind, t.class, t.every_s)
}

/// The matrix as a table of cells.
fn matrix(s: &Status, t: &TestStatus, pairs: &[&PairStatus]) -> String {
    let down = |name: &str| s.members.iter().any(|m| m.name == name && m.down);
    let head = |name: &str| match down(name) {
        true => format!(
            "<th class=\"down\" title=\"{0} is down\">{0}<small>down</small></th>",
            esc(name)
        ),
        false => format!("<th>{}</th>", esc(name)),
    };
    let mut h = String::from("<table class=\"heat\">\n<thead><tr><th>source \\ target</th>");
    h.extend(s.members.iter().map(|m| head(&m.name)));
    h.push_str("</tr></thead>\n<tbody>\n");
    for src in &s.members {
        h.push_str("<tr>");
        h.push_str(&head(&src.name));
        for dst in &s.members {
            let p = pairs
                .iter()
                .find(|p| p.source == src.name && p.target == dst.name);
            let marked = down(&src.name) || down(&dst.name);
            h.push_str(&match (src.name == dst.name, p) {
                (true, _) => "<td class=\"self\">·</td>".to_string(),
                (false, None) => empty_cell(t, &src.name, &dst.name, marked),
                (false, Some(p)) => cell(t, p, marked),
            });
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

/// The attributes every pair's cell carries: its tone and marks, and which pair it is.
fn attributes(t: &TestStatus, source: &str, target: &str, classes: &str) -> String {
    format!(
        "class=\"cell {classes}\" data-test=\"{}\" data-source=\"{}\" data-target=\"{}\"",
        esc(&t.name),
        esc(source),
        esc(target)
    )
}

/// A pair with no stored run.
fn empty_cell(t: &TestStatus, source: &str, target: &str, down: bool) -> String {
    let classes = if down { "none down" } else { "none" };
    format!(
        "<td {} title=\"{} → {}: no run stored\">–</td>",
        attributes(t, source, target, classes),
        esc(source),
        esc(target)
    )
}

/// A pair's cell: the figure, its change, the alert's mark; the tooltip says it all.
fn cell(t: &TestStatus, p: &PairStatus, down: bool) -> String {
    let mut classes = tone(t, p).to_string();
    if p.alert {
        classes.push_str(" alert");
    }
    if down {
        classes.push_str(" down");
    }
    let value = p
        .value
        .map_or_else(|| "failed".into(), |v| figure(&t.figure, v));
    let change = match (p.change_percent, p.baseline, p.value) {
        (Some(c), _, _) => format!("<small>{c:+.0}%</small>"),
        (None, None, Some(_)) => "<small>learning</small>".into(),
        _ => String::new(),
    };
    let mark = if p.alert {
        "<b class=\"mark\">ALERT</b>"
    } else {
        ""
    };
    format!(
        "<td {} title=\"{}\">{}{change}{mark}</td>",
        attributes(t, &p.source, &p.target, &classes),
        esc(&tooltip(t, p)),
        esc(&value)
    )
}

/// "h1 → h2 (rr): 60.3 ms, +202% against 20.0 ms (band 18.0 ms to 22.0 ms); ALERT since
/// 2026-01-02 10:00:00 UTC; 20 runs, 1 failed; latest 2026-01-02 10:04:00 UTC".
fn tooltip(t: &TestStatus, p: &PairStatus) -> String {
    let shown = |v: f64| figure(&t.figure, v);
    let mut s = format!("{} → {} ({}): ", p.source, p.target, t.name);
    s.push_str(&p.value.map_or("failed".into(), shown));
    match (p.change_percent, p.baseline) {
        (Some(c), Some(b)) => s.push_str(&format!(", {c:+.1}% against {}", shown(b))),
        _ if p.value.is_some() => s.push_str(", no baseline yet (learning)"),
        _ => {}
    }
    if let (Some(lo), Some(hi)) = (p.band_low, p.band_high) {
        s.push_str(&format!(" (band {} to {})", shown(lo), shown(hi)));
    }
    if p.alert {
        s.push_str("; ALERT");
        if let Some(since) = p.alert_since_unix_s {
            s.push_str(&format!(" since {} UTC", when(since)));
        }
    }
    s.push_str(&format!("; {} runs, {} failed", p.runs, p.failed));
    if let Some(last) = p.last_unix_s {
        s.push_str(&format!("; latest {} UTC", when(last)));
    }
    s
}

/// A mesh too large for a heat-map: its alerting pairs, as a list.
fn alerting(t: &TestStatus, pairs: &[&PairStatus]) -> String {
    let raised: Vec<String> = pairs
        .iter()
        .filter(|p| p.alert)
        .map(|p| format!("<li>{}</li>\n", esc(&tooltip(t, p))))
        .collect();
    match raised.is_empty() {
        true => format!(
            "<p class=\"note\">{} pairs, too many members for a heat-map; no alert.</p>\n",
            pairs.len()
        ),
        false => format!(
            "<p class=\"note\">{} pairs, too many members for a heat-map; the alerting ones:</p>\n<ul>\n{}</ul>\n",
            pairs.len(),
            raised.concat()
        ),
    }
}

/// The legend of the cells' tones and marks.
pub fn legend() -> String {
    let mut h = String::from("<p class=\"legend\">");
    for (class, what) in TONES {
        h.push_str(&format!(
            "<span class=\"swatch {class}\"></span>{}",
            esc(what)
        ));
    }
    h.push_str("<span class=\"swatch alert\"></span>alert raised");
    h.push_str("<span class=\"swatch down\"></span>a member down</p>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(value: Option<f64>, baseline: Option<f64>) -> PairStatus {
        PairStatus {
            runs: 3,
            value,
            baseline,
            change_percent: PairStatus::change(value, baseline),
            ..PairStatus::default()
        }
    }

    #[test]
    fn a_cell_s_tone_follows_the_test_s_sense_of_worse() {
        let latency = TestStatus {
            higher_is_worse: true,
            ..TestStatus::default()
        };
        let rate = TestStatus::default();
        assert_eq!(tone(&latency, &pair(Some(300.0), Some(100.0))), "worse-3");
        assert_eq!(tone(&rate, &pair(Some(300.0), Some(100.0))), "better-3");
        assert_eq!(tone(&rate, &pair(Some(70.0), Some(100.0))), "worse-2");
        assert_eq!(tone(&rate, &pair(Some(90.0), Some(100.0))), "worse-1");
        assert_eq!(tone(&rate, &pair(Some(102.0), Some(100.0))), "same");
        assert_eq!(tone(&rate, &pair(Some(1.0), None)), "learning");
        assert_eq!(tone(&rate, &pair(None, Some(1.0))), "failed");
    }
}
