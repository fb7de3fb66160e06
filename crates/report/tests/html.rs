//! The HTML report: its structure (self-contained, escaped, one chart per plot), and the page
//! loaded in Debian's headless Chromium: no console message, every chart in the DOM it built,
//! and a screenshot whose charts are drawn (kept as target/test-artifacts/html-report.png).

mod chromium;
mod common;
mod series_fixture;

use chromium::{browse, chromium, dom, pixels};
use common::report;
use fathom_report::about;
use fathom_report::html::{render, Page, Section};
use fathom_report::model::WanLinkResult;
use series_fixture::{rr_sweep, stream_iterations, stream_sweep};
use std::path::Path;

/// The arguments run 7 was typed with.
fn args() -> Vec<String> {
    [
        "stream",
        "--server",
        "h2",
        "--clients",
        "h1",
        "--buffer",
        "1M",
        "-t",
        "3",
    ]
    .map(String::from)
    .to_vec()
}

/// A page with every kind of section, and hostile text in the places users' data reaches.
fn page() -> Page {
    let mut run = report(2, false);
    run.wan.push(WanLinkResult {
        name: "h1-h2".into(),
        ends: ["h1".into(), "h2".into()],
        a_to_b: "delay=25ms".into(),
        b_to_a: "delay=25ms,loss=1%".into(),
        ..WanLinkResult::default()
    });
    run.hosts[0].hostname = "<img src=x onerror=alert(1)>".into();
    run.warnings
        .push("receive window \"limited\" & <small>".into());
    Page {
        title: "fathom report: buffers & <streams>".into(),
        subtitle: "3 runs on h1 → h2".into(),
        findings: vec![
            "Above 256 KB, larger buffers add under 5%.".into(),
            "<script>alert(1)</script>".into(),
        ],
        sections: vec![
            Section::Run {
                title: "Stream, 2 flows".into(),
                about: about::run_lines(Some(7), &args(), &args(), &run),
                report: run,
            },
            Section::Run {
                title: "Stream, 4 flows each way".into(),
                report: report(4, true),
                about: Vec::new(),
            },
            Section::Series {
                title: "Socket buffers".into(),
                series: stream_sweep(),
                x_axis: "buffer".into(),
                more_charts: vec!["retransmits".into()],
            },
            Section::Series {
                title: "Request/response payload".into(),
                series: rr_sweep(),
                x_axis: "size".into(),
                more_charts: Vec::new(),
            },
            Section::Series {
                title: "Repeated".into(),
                series: stream_iterations(),
                x_axis: String::new(),
                more_charts: Vec::new(),
            },
        ],
        environment: vec![
            ("h1 kernel".into(), "6.1.0-fake".into()),
            ("h2 hostname".into(), "<b>bold</b>".into()),
        ],
    }
}

#[test]
fn page_is_self_contained_html5() {
    let h = render(&page());
    assert!(h.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(h.trim_end().ends_with("</html>"));
    for external in [
        "http://",
        "https://",
        "<script",
        "<link rel=\"stylesheet",
        "url(",
    ] {
        assert!(!h.contains(external), "the page contains {external}");
    }
    assert!(h.contains("<style>"));
    // Run sections: throughput, rtt, cwnd, retransmits, packets; series: the sweep and its
    // retransmits, the sweep and the latency chart for the request/response one, the
    // iterations run by run.
    assert_eq!(
        h.matches("<svg ").count(),
        5 + 5 + 2 + 2 + 1,
        "one inline SVG per chart"
    );
    assert!(!h.contains("No chart"), "every chart drew");
}

#[test]
fn every_text_is_escaped() {
    let h = render(&page());
    assert!(!h.contains("<img"), "host names are escaped");
    assert!(!h.contains("<script>"));
    assert!(!h.contains("<b>bold"));
    assert!(h.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(h.contains("<title>fathom report: buffers &amp; &lt;streams&gt;</title>"));
    assert!(h.contains("receive window &quot;limited&quot; &amp; &lt;small&gt;"));
}

#[test]
fn tables_hold_the_figures() {
    let h = render(&page());
    assert!(h.contains("<li>Above 256 KB, larger buffers add under 5%.</li>"));
    assert!(
        h.contains("<th>Throughput, receiver</th>") || h.contains(">Throughput, receiver</td>")
    );
    assert!(h.contains("Throughput (Gbit/s) mean ± CI"));
    assert!(
        h.contains("agent h2: connection refused"),
        "a failed point shows its error"
    );
    assert!(h.contains("<th>h1 kernel</th><td>6.1.0-fake</td>"));
    assert!(
        h.contains("<td class=\"num\">"),
        "numbers are right-aligned"
    );
}

#[test]
fn a_run_says_what_ran_under_its_heading_and_its_charts() {
    let h = render(&page());
    let command = "run 7: fathom stream --server h2 --clients h1 --buffer 1M -t 3";
    let wan = "wan h1-h2: h1 → h2: delay=25ms; h2 → h1: delay=25ms,loss=1%";
    for line in [command, wan] {
        assert!(
            h.contains(&format!("<code>{line}</code>")),
            "{line} under the heading"
        );
        // Under each of the run's five charts (SVG text, escaped as the page escapes).
        assert_eq!(
            h.matches(&format!("\n{line}\n</text>")).count(),
            5,
            "{line}"
        );
    }
    assert_eq!(
        h.matches("series s1: fathom sweep stream -t 5 --vary")
            .count()
            + h.matches("series s1: fathom sweep rr -t 5 --vary").count(),
        4,
        "under each sweep chart, with its kind"
    );
    assert!(h.contains("series s1: fathom stream --iterations 5 --buffer 1M\n</text>"));
}

#[test]
fn a_series_table_keeps_the_secondary_figures() {
    let h = render(&page());
    assert!(
        h.contains(">CPU s/GB</th>") && h.contains(">retrans</th>"),
        "stream columns"
    );
    assert!(
        h.contains(">p50 µs</th>") && h.contains(">CPU µs/tx</th>"),
        "rr columns"
    );
}

#[test]
fn a_chart_that_cannot_be_made_says_why() {
    let mut p = page();
    p.sections = vec![Section::Series {
        title: "sweep".into(),
        series: stream_sweep(),
        x_axis: "rtt".into(),
        more_charts: Vec::new(),
    }];
    let h = render(&p);
    assert!(
        h.contains("No chart: no swept option &#39;rtt&#39;; the series sweeps: buffer, parallel")
    );
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    chromium::scratch(env!("CARGO_TARGET_TMPDIR"), name)
}

#[test]
fn chromium_shows_the_page_with_a_clean_console_and_drawn_charts() {
    let Some(bin) = chromium() else { return };
    let dir = scratch("html-report");
    let html = dir.join("report.html");
    std::fs::write(&html, render(&page())).expect("page written");
    let shot = dir.join("report.png");
    let b = browse(&bin, &dir, &html, &shot);
    assert!(b.ok, "chromium failed:\n{}", b.stderr);
    assert!(
        b.console().is_empty(),
        "console messages: {:#?}",
        b.console()
    );
    let bytes = std::fs::read(&shot).expect("chromium wrote the screenshot");
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    std::fs::copy(&shot, artifacts.join("html-report.png")).expect("screenshot kept");

    let chromium::Pixels { inked, colored } = pixels(&bytes);
    assert!(
        inked > 20_000,
        "the page shows text and tables: {inked} inked pixels"
    );
    assert!(
        colored > 3_000,
        "the charts' lines are drawn: {colored} colored pixels"
    );
    let built = dom(&bin, &dir, &html);
    assert!(built.ok, "chromium failed:\n{}", built.stderr);
    assert_eq!(
        built.stdout.matches("<svg ").count(),
        15,
        "every chart is in the DOM"
    );
}

#[test]
fn chromium_console_errors_are_caught() {
    let Some(bin) = chromium() else { return };
    let dir = scratch("html-console");
    let html = dir.join("bad.html");
    let bad = "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body>\
               <script>console.error('planted'); missing();</script></body></html>";
    std::fs::write(&html, bad).expect("page written");
    let b = browse(&bin, &dir, &html, &dir.join("bad.png"));
    let console = b.console().join("\n");
    assert!(
        console.contains("planted"),
        "console.error is seen: {}",
        b.stderr
    );
    assert!(console.contains("Uncaught ReferenceError"), "{console}");
}

/// A page of one run section holding `run`.
fn one_run(run: fathom_report::Report) -> String {
    render(&Page {
        title: "advice".into(),
        sections: vec![Section::Run {
            title: "Stream".into(),
            report: run,
            about: Vec::new(),
        }],
        ..Page::default()
    })
}

#[test]
fn a_run_with_advice_shows_the_advisors_findings_and_one_without_does_not() {
    let plain = one_run(report(1, false));
    assert!(
        !plain.contains("<h3>Advice</h3>"),
        "no advice unless the run has it"
    );
    let mut run = report(1, false);
    run.advice = Some(vec![fathom_report::model::Advice {
        id: "receive_window".into(),
        severity: "warning".into(),
        confidence: "high".into(),
        seen: "limited by the receive window 83% of the time".into(),
        why: "a 48 KB window <at> 100 ms".into(),
        change: "--buffer 2M".into(),
        ..Default::default()
    }]);
    let h = one_run(run.clone());
    assert!(h.contains("<div class=\"advice\">\n<h3>Advice</h3>"), "{h}");
    assert!(
        h.contains("<code>receive_window</code> (high confidence)"),
        "{h}"
    );
    assert!(h.contains("change: <code>--buffer 2M</code>"), "{h}");
    assert!(h.contains("a 48 KB window &lt;at&gt; 100 ms"), "escaped");
    run.advice = Some(Vec::new());
    assert!(one_run(run).contains("found nothing that limited this run"));
}
