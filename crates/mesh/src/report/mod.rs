//! `fathom mesh report`: one self-contained HTML page of a mesh, in the report's style (inline
//! CSS and SVG, no script, no external URL): a headline (members, members down, alerts, the
//! likely culprit), a heat-map of the matrix per test ([`heat`]), and each pair's history as
//! a chart ([`plots`]) from its stored runs ([`history`]). Pure: a [`Status`] and the
//! histories in, the page out.

pub mod heat;
pub mod history;
pub mod plots;

use crate::status::{PairStatus, Status};
use fathom_report::html::{document, esc};
use history::PairHistory;
use plots::Clock;

/// The page of mesh status `s` with the histories of its pairs, `subtitle` under its heading
/// (where the data came from, the span shown).
pub fn render(s: &Status, histories: &[PairHistory], subtitle: &str) -> String {
    let title = format!("fathom mesh report: {}", s.mesh);
    let mut body = headline(s);
    if s.pairs.is_empty() {
        body.push_str(&format!(
            "<p class=\"empty\">No runs of mesh {} are stored yet: <code>fathom mesh run</code> \
             keeps them, and this page shows them once it has.</p>\n",
            esc(&s.mesh)
        ));
        return document(&title, subtitle, CSS, &body);
    }
    for t in &s.tests {
        body.push_str(&heat::section(s, t, &of_test(&s.pairs, &t.name)));
    }
    body.push_str(&heat::legend());
    let first = histories.iter().filter_map(|h| h.points.first());
    let last = histories.iter().filter_map(|h| h.points.last());
    let t0 = first.map(|p| p.at_unix_s).fold(f64::INFINITY, f64::min);
    let t1 = last.map(|p| p.at_unix_s).fold(f64::NEG_INFINITY, f64::max);
    let clock = Clock::new(t0.min(t1), t1);
    for t in &s.tests {
        let mine: Vec<&PairHistory> = histories.iter().filter(|h| h.test == t.name).collect();
        body.push_str(&plots::section(
            t,
            &mine,
            &of_test(&s.pairs, &t.name),
            &clock,
        ));
    }
    document(&title, subtitle, CSS, &body)
}

/// The pairs of test `test`.
fn of_test<'a>(pairs: &'a [PairStatus], test: &str) -> Vec<&'a PairStatus> {
    pairs.iter().filter(|p| p.test == test).collect()
}

/// The figures at the top: members, those down (and why), alerts, the likely culprit.
fn headline(s: &Status) -> String {
    let stat = |bad: bool, big: &str, what: &str, small: &str| {
        let class = if bad { "stat bad" } else { "stat" };
        let small = match small.is_empty() {
            true => String::new(),
            false => format!("<small>{}</small>", esc(small)),
        };
        format!(
            "<div class=\"{class}\"><b>{}</b> {}{small}</div>\n",
            esc(big),
            esc(what)
        )
    };
    let down: Vec<String> = s
        .members
        .iter()
        .filter(|m| m.down)
        .map(|m| {
            format!(
                "{}: {}",
                m.name,
                m.reason.as_deref().unwrap_or("unreachable")
            )
        })
        .collect();
    let mut h = String::from("<section class=\"headline\">\n");
    h.push_str(&stat(false, &s.members.len().to_string(), "members", ""));
    h.push_str(&stat(
        !down.is_empty(),
        &down.len().to_string(),
        "down",
        &down.join("; "),
    ));
    let alerts = if s.alerts == 1 { "alert" } else { "alerts" };
    h.push_str(&stat(s.alerts > 0, &s.alerts.to_string(), alerts, ""));
    h.push_str(&match s.culprits.first() {
        Some(c) => stat(
            true,
            &c.member,
            "likely culprit",
            &format!("alerts with {} of {} partners", c.alerting, c.partners),
        ),
        None => stat(false, "none", "likely culprit", ""),
    });
    h.push_str("</section>\n");
    h
}

/// The page's own style, after the report's.
const CSS: &str = r#"
.headline { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0 8px; }
.stat { border: 1px solid var(--line); border-radius: 8px; padding: 8px 16px; min-width: 150px; background: var(--soft); }
.stat b { font-size: 24px; margin-right: 4px; }
.stat small { display: block; color: var(--muted); }
.stat.bad { background: #ffebe9; border-color: #ffc1ba; }
.empty { font-size: 17px; padding: 16px; border: 1px dashed var(--line); border-radius: 8px; }
table.heat td, table.heat th { text-align: center; padding: 4px 8px; border: 2px solid #fff; }
table.heat tbody th { text-align: right; background: var(--soft); }
table.heat td.cell { min-width: 88px; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.heat td small { display: block; font-size: 12px; }
table.heat th small { display: block; font-size: 11px; font-weight: 600; color: #b00020; }
td.self { color: var(--muted); background: #fff; }
.mark { display: block; font-size: 11px; letter-spacing: 0.05em; }
.same { background: #eef1f4; }
.worse-1 { background: #fddbc7; }
.worse-2 { background: #f4a582; }
.worse-3 { background: #d6604d; color: #fff; }
.better-1 { background: #d9f0d3; }
.better-2 { background: #a6dba0; }
.better-3 { background: #1b7837; color: #fff; }
.learning { background: #e8eefc; }
.failed { background: #59636e; color: #fff; }
.none { background: #fff; color: var(--muted); }
.alert { outline: 3px solid #a50026; outline-offset: -3px; font-weight: 700; }
.down { background-image: repeating-linear-gradient(45deg, transparent 0 6px, rgba(0, 0, 0, 0.14) 6px 8px); }
.legend { font-size: 13px; color: var(--muted); line-height: 2; }
.swatch { display: inline-block; width: 16px; height: 14px; margin: 0 5px 0 14px; vertical-align: -2px; border: 1px solid var(--line); }
.swatch.alert { outline-offset: -2px; outline-width: 2px; }
"#;
