//! The HTML report: its structure (self-contained, escaped, one chart per plot), and the page
//! loaded in Debian's headless Chromium: no console message, and a screenshot whose charts are
//! drawn (kept as target/test-artifacts/html-report.png).

mod common;
mod series_fixture;

use common::report;
use fathom_report::about;
use fathom_report::html::{render, Page, Section};
use fathom_report::model::WanLinkResult;
use series_fixture::{rr_sweep, stream_iterations, stream_sweep};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs Chromium (scripts/install-test-deps.sh).
const CHROMIUM: &str = "/usr/bin/chromium";
/// Chromium is killed after this long.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);
/// Screenshot size.
const WINDOW: (u32, u32) = (1200, 2000);

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

/// What a Chromium run left: its exit status and stderr.
struct Browsed {
    ok: bool,
    stderr: String,
}

impl Browsed {
    /// Console messages (any level) and uncaught errors Chromium logged for the page.
    fn console(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
            .collect()
    }
}

/// `None` (with the reason printed) when Chromium is missing outside CI; panics in CI.
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(CHROMIUM);
    if path.exists() {
        return Some(path);
    }
    let why = format!("{CHROMIUM} is missing: run scripts/install-test-deps.sh");
    assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// Loads `html` in headless Chromium and screenshots it to `shot`, killing Chromium (by its own
/// PID) if it outlives [`CHROMIUM_TIMEOUT`].
fn browse(bin: &Path, dir: &Path, html: &Path, shot: &Path) -> Browsed {
    let stderr_path = dir.join("chromium.stderr");
    let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("chromium's status") {
            break s;
        }
        if start.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium (pid {}) ran over {CHROMIUM_TIMEOUT:?} and was killed",
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Browsed {
        ok: status.success(),
        stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
    }
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
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

    let mut reader = png::Decoder::new(&bytes[..]).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("one frame");
    assert_eq!((info.width, info.height), WINDOW);
    let channels = info.color_type.samples();
    let px: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let inked = px
        .iter()
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count();
    // Chart lines are saturated colors; text, rules and shading are grey.
    let colored = px
        .iter()
        .filter(|p| {
            let (max, min) = (p[..3].iter().max().unwrap(), p[..3].iter().min().unwrap());
            max - min > 80
        })
        .count();
    assert!(
        inked > 20_000,
        "the page shows text and tables: {inked} inked pixels"
    );
    assert!(
        colored > 3_000,
        "the charts' lines are drawn: {colored} colored pixels"
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
