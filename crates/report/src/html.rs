//! The HTML report: one self-contained HTML5 file (inline CSS, charts as inline SVG, no script,
//! no external URL) with the findings, a section per run or series (tables, warnings, charts)
//! and the environment. Every text from the data is escaped.

mod advice;
mod parts;
mod run;
mod series;

use crate::export::Exporter;
use crate::model::Report;
use crate::series::Series;
pub use parts::{charts, esc};
pub(crate) use parts::{notes, table};

/// A report page.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The page's heading and title.
    pub title: String,
    /// A line under the heading (what was run, when).
    pub subtitle: String,
    /// What the data says, one sentence each, listed at the top.
    pub findings: Vec<String>,
    /// The results, in order.
    pub sections: Vec<Section>,
    /// Hosts, kernels, versions: name and value, shown as a table at the end.
    pub environment: Vec<(String, String)>,
}

/// One part of the page.
// A page holds a handful of sections: boxing the report would only make callers write Box::new.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Section {
    /// One run: its summary table, warnings and interval charts.
    Run {
        /// The section's heading.
        title: String,
        /// The run.
        report: Report,
        /// What ran (its id, the command as typed, its WAN links; see [`crate::about`]),
        /// shown under the heading and under every chart.
        about: Vec<String>,
    },
    /// A sweep or iterated test: the table of points and the sweep chart.
    Series {
        /// The section's heading.
        title: String,
        /// The series.
        series: Series,
        /// The swept option drawn on the x axis.
        x_axis: String,
        /// Figures charted after the main one (e.g. `cpu_s_per_gb`).
        more_charts: Vec<String>,
    },
}

/// The HTML exporter: a [`Page`] as one self-contained file.
#[derive(Clone, Copy, Debug, Default)]
pub struct Html;

impl Exporter<Page> for Html {
    fn export(&self, p: &Page) -> Vec<u8> {
        render(p).into_bytes()
    }
}

/// The page as one HTML5 document.
pub fn render(p: &Page) -> String {
    let mut h = String::with_capacity(64 * 1024);
    if !p.findings.is_empty() {
        h.push_str("<section class=\"findings\">\n<h2>Findings</h2>\n<ul>\n");
        for f in &p.findings {
            h.push_str(&format!("<li>{}</li>\n", esc(f)));
        }
        h.push_str("</ul>\n</section>\n");
    }
    for s in &p.sections {
        h.push_str(&match s {
            Section::Run {
                title,
                report,
                about,
            } => run::section(title, report, about),
            Section::Series {
                title,
                series,
                x_axis,
                more_charts,
            } => series::section(title, series, x_axis, more_charts),
        });
    }
    if !p.environment.is_empty() {
        h.push_str("<section>\n<h2>Environment</h2>\n<table class=\"env\">\n<tbody>\n");
        for (k, v) in &p.environment {
            h.push_str(&format!(
                "<tr><th>{}</th><td>{}</td></tr>\n",
                esc(k),
                esc(v)
            ));
        }
        h.push_str("</tbody>\n</table>\n</section>\n");
    }
    document(&p.title, &p.subtitle, "", &h)
}

/// A self-contained HTML5 document in the report's style (plus `css`): `title` as its title
/// and heading, `subtitle` under it (both escaped here), then `body`, HTML made with [`esc`].
pub fn document(title: &str, subtitle: &str, css: &str, body: &str) -> String {
    let mut h = String::with_capacity(body.len() + 8 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str("<link rel=\"icon\" href=\"data:,\">\n");
    h.push_str(&format!(
        "<title>{}</title>\n<style>{CSS}{css}</style>\n",
        esc(title)
    ));
    h.push_str("</head>\n<body>\n<main>\n<header>\n");
    h.push_str(&format!("<h1>{}</h1>\n", esc(title)));
    if !subtitle.is_empty() {
        h.push_str(&format!("<p class=\"subtitle\">{}</p>\n", esc(subtitle)));
    }
    h.push_str("</header>\n");
    h.push_str(body);
    h.push_str("<footer>Made by fathom ");
    h.push_str(env!("CARGO_PKG_VERSION"));
    h.push_str(".</footer>\n</main>\n</body>\n</html>\n");
    h
}

const CSS: &str = r#"
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d8dee4; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 28px 28px 48px; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 6px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
.subtitle, .meta, footer { color: var(--muted); margin: 0 0 12px; }
footer { margin-top: 40px; font-size: 13px; }
.findings { background: #eef6ff; border: 1px solid #c8e1ff; border-radius: 8px; padding: 4px 20px 8px; margin-top: 20px; }
.findings h2 { border: 0; margin: 10px 0 0; font-size: 18px; }
.findings li { margin: 4px 0; }
.tables { display: flex; flex-wrap: wrap; gap: 0 28px; align-items: flex-start; }
table { border-collapse: collapse; margin: 12px 0 16px; font-size: 14px; }
th, td { padding: 5px 12px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: var(--soft); font-weight: 600; border-bottom: 2px solid var(--line); }
tbody tr:nth-child(even) { background: #fbfcfd; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.summary th { font-weight: 500; color: var(--muted); }
table.env th { font-weight: 500; color: var(--muted); }
.warnings { background: #fff8e5; border: 1px solid #f0d78c; border-radius: 8px; padding: 8px 16px 8px 34px; }
.error { background: #ffebe9; border: 1px solid #ffc1ba; border-radius: 8px; padding: 8px 16px; }
.note { color: var(--muted); font-style: italic; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: 6px; background: #fff; }
figure.chart svg { display: block; width: 100%; height: auto; }
"#;
