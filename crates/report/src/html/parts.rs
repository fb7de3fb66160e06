//! The pieces every part of the HTML page is made of: escaped text, tables, warning boxes and
//! charts inlined as SVG.

use crate::plot::{self, Chart, ImageFormat, PlotError};

/// Size of every chart, pixels (it scales with the page).
const CHART_SIZE: (u32, u32) = (640, 380);

/// `s` safe as HTML text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The charts of `list` as a grid of inline SVG figures, each with its own notes and then
/// `notes` under it (what ran), or why it could not be drawn.
pub fn charts(list: Vec<Result<Chart, PlotError>>, notes: &[String]) -> String {
    let mut h = String::from("<div class=\"charts\">\n");
    for c in list {
        let figure = c.and_then(|mut c| {
            c.notes.extend_from_slice(notes);
            let svg = plot::render(&c, ImageFormat::Svg, CHART_SIZE.0, CHART_SIZE.1)?;
            let svg = String::from_utf8(svg).map_err(|e| PlotError::Draw(e.to_string()))?;
            Ok(inline_svg(&svg, &c.title))
        });
        match figure {
            Ok(svg) => h.push_str(&format!("<figure class=\"chart\">{svg}</figure>\n")),
            Err(e) => h.push_str(&format!(
                "<p class=\"note\">No chart: {}</p>\n",
                esc(&e.to_string())
            )),
        }
    }
    h.push_str("</div>\n");
    h
}

/// An SVG document made fit for inlining: no XML declaration, no namespace URL (HTML needs
/// neither), a viewBox so that it scales, and a label for screen readers.
fn inline_svg(svg: &str, title: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    let body = &svg[start..];
    let open_end = body.find('>').map_or(0, |i| i + 1);
    let (w, h) = CHART_SIZE;
    format!(
        "<svg viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\">{}",
        esc(title),
        &body[open_end..]
    )
}

/// A table: `head` cells, then rows; cells are (text, numeric), numbers right-aligned.
pub(crate) fn table(class: &str, head: &[(String, bool)], rows: &[Vec<(String, bool)>]) -> String {
    let cell = |tag: &str, (text, num): &(String, bool)| {
        let class = if *num { " class=\"num\"" } else { "" };
        format!("<{tag}{class}>{}</{tag}>", esc(text))
    };
    let mut h = format!("<table class=\"{class}\">\n<thead><tr>");
    h.extend(head.iter().map(|c| cell("th", c)));
    h.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        h.push_str("<tr>");
        h.extend(r.iter().map(|c| cell("td", c)));
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

/// Warnings and an error as boxes.
pub(crate) fn notes(warnings: &[String], error: Option<&str>) -> String {
    let mut h = String::new();
    if let Some(e) = error {
        h.push_str(&format!("<p class=\"error\">Error: {}</p>\n", esc(e)));
    }
    if !warnings.is_empty() {
        h.push_str("<ul class=\"warnings\">\n");
        for w in warnings {
            h.push_str(&format!("<li>{}</li>\n", esc(w)));
        }
        h.push_str("</ul>\n");
    }
    h
}
