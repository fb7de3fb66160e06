//! `fathom mesh report` on a store filled through the store's API (deterministic: fixed
//! times, figures and judgements): the page's headline, heat-map cells and charts, checked in
//! its text and in headless Chromium (a clean console, the cells and charts in the DOM it
//! built, a screenshot with colour; kept as target/test-artifacts/mesh-report.png); `--since`
//! charting only the span asked; a mesh with no runs yet; a bad file (exit 2 at
//! FILE:LINE:COLUMN) and a missing store (one line, exit 1).

#[path = "../crates/report/tests/chromium/mod.rs"]
mod chromium;
mod common;

use chromium::{browse, dom, pixels};
use common::{run, stderr};
use fathom_report::series::Series;
use fathom_store::{MeshMember, MeshRun, Store};
use std::path::{Path, PathBuf};

/// When the stored runs start, Unix seconds (2024-01-01 00:00:00 UTC).
const T0: f64 = 1_704_067_200.0;
/// Runs stored per pair of the rr test, 10 s apart.
const RUNS: usize = 30;
/// The run from which every pair with c goes bad (and its alert is raised three runs later).
const BAD_FROM: usize = 20;

/// A mesh file of members a, b and c with an rr test and a stream test called "bulk"; a
/// culprit needs two partners (c has only two).
fn mesh_file(dir: &Path) -> String {
    let text = "[mesh]\nname = \"loop\"\n\n[members]\nhosts = [\"a\", \"b\", \"c\"]\n\n\
                [[test]]\ncommand = \"rr --size 64 -t 100ms\"\nevery = \"10s\"\n\n\
                [[test]]\nname = \"bulk\"\ncommand = \"stream -t 1s\"\nevery = \"60s\"\n\n\
                [alert]\nculprit = 2\n";
    let path = dir.join("mesh.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// One judged run of `test` from `source` to `target`.
fn judged(test: &str, source: &str, target: &str, i: usize, value: Option<f64>) -> MeshRun {
    let (figure, baseline) = match test {
        "rr" => ("latency_p50_us", 100.0),
        _ => ("bits_per_second", 9e8),
    };
    MeshRun {
        mesh: "loop".into(),
        test: test.into(),
        source: source.into(),
        target: target.into(),
        class: "normal".into(),
        started_unix_s: T0 + 10.0 * i as f64,
        ended_unix_s: T0 + 10.0 * i as f64 + 0.1,
        figure: figure.into(),
        value,
        baseline: (i >= 10).then_some(baseline),
        band_low: (i >= 10).then_some(baseline * 0.9),
        band_high: (i >= 10).then_some(baseline * 1.1),
        error: value.is_none().then(|| "connection refused".into()),
        ..MeshRun::default()
    }
}

/// Saves `runs` (of one pair) in its series.
fn save(store: &mut Store, runs: &[MeshRun]) {
    let series = Series {
        kind: "rr".into(),
        ..Series::default()
    };
    let id = store.mesh_series(&runs[0], &series).unwrap();
    for r in runs {
        store.save_mesh_run(id, None, r).unwrap();
    }
}

/// A store where every rr pair with c goes from 100 µs to 300 µs at run [`BAD_FROM`] (its
/// alert raised three runs later), the others stay at 100 µs; bulk ran a → b (learning) and
/// b → a (its latest run failed); c is down.
fn filled_store(path: &Path) {
    let mut store = Store::open(path).unwrap();
    let members = ["a", "b", "c"];
    for s in members {
        for t in members.iter().filter(|t| **t != s) {
            let with_c = s == "c" || *t == "c";
            let runs: Vec<MeshRun> = (0..RUNS)
                .map(|i| {
                    let bad = with_c && i >= BAD_FROM;
                    let v = if bad { 300.0 } else { 100.0 + (i % 3) as f64 };
                    let mut r = judged("rr", s, t, i, Some(v));
                    r.alert = with_c && i >= BAD_FROM + 2;
                    r.change = (with_c && i == BAD_FROM + 2).then(|| "raised".into());
                    r
                })
                .collect();
            save(&mut store, &runs);
        }
    }
    let bulk_ab: Vec<MeshRun> = (0..3)
        .map(|i| judged("bulk", "a", "b", i, Some(9.4e8)))
        .collect();
    save(&mut store, &bulk_ab);
    let bulk_ba = [
        judged("bulk", "b", "a", 0, Some(9.1e8)),
        judged("bulk", "b", "a", 1, None),
    ];
    save(&mut store, &bulk_ba);
    let down = MeshMember {
        name: "c".into(),
        down: true,
        since_unix_s: Some(T0 + 290.0),
        reason: Some("connection refused".into()),
    };
    store.set_mesh_member("loop", &down).unwrap();
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    chromium::scratch(env!("CARGO_TARGET_TMPDIR"), name)
}

/// Runs `fathom mesh report` with `args` and returns the page it wrote to `out`.
fn report(file: &str, db: &Path, out: &Path, args: &[&str]) -> String {
    let (db, o) = (db.to_str().unwrap(), out.to_str().unwrap());
    let argv = [&["mesh", "report", file, "--store", db, "-o", o], args].concat();
    let done = run(&argv, 60);
    let err = stderr(&done);
    assert!(done.status.success(), "{err}");
    assert!(err.contains(&format!("wrote {o}")), "{err}");
    std::fs::read_to_string(out).unwrap()
}

/// The cell of a pair in the page or DOM `h`: its opening tag.
fn cell<'a>(h: &'a str, test: &str, source: &str, target: &str) -> &'a str {
    let key = format!("data-test=\"{test}\" data-source=\"{source}\" data-target=\"{target}\"");
    let at = h.find(&key).unwrap_or_else(|| panic!("no cell {key}"));
    let open = h[..at].rfind("<td").unwrap();
    &h[open..at + h[at..].find('>').unwrap()]
}

#[test]
fn the_page_has_the_headline_a_heat_map_cell_per_pair_and_a_chart_per_pair() {
    let dir = scratch("mesh-report");
    let file = mesh_file(&dir);
    let db = dir.join("m.db");
    filled_store(&db);
    let out = dir.join("mesh.html");
    let h = report(&file, &db, &out, &[]);
    assert!(h.contains("<title>fathom mesh report: loop</title>"));
    assert!(h.contains("<b>3</b> members"), "headline");
    assert!(h.contains("<b>1</b> down<small>c: connection refused</small>"));
    assert!(h.contains("<b>4</b> alerts"), "every rr pair with c");
    assert!(h.contains("<b>c</b> likely culprit<small>alerts with 2 of 2 partners"));
    assert_eq!(h.matches("class=\"cell ").count(), 12, "6 pairs, 2 tests");
    assert!(cell(&h, "rr", "a", "c").contains("class=\"cell worse-3 alert down\""));
    assert!(cell(&h, "rr", "a", "b").contains("class=\"cell same\""));
    assert!(cell(&h, "rr", "a", "c").contains("300 µs, +200.0% against 100 µs"));
    assert!(cell(&h, "bulk", "a", "b").contains("class=\"cell learning\""));
    assert!(
        h.contains("940.0 Mbit/s<small>learning</small>"),
        "a learning pair says so"
    );
    assert!(cell(&h, "bulk", "b", "a").contains("class=\"cell failed\""));
    assert!(cell(&h, "bulk", "a", "c").contains("class=\"cell none down\""));
    assert_eq!(h.matches("ALERT</b>").count(), 4);
    assert_eq!(
        h.matches("<svg ").count(),
        6 + 2,
        "a chart per pair with runs"
    );
    assert!(!h.contains("No chart"), "every chart drew");
    assert!(
        h.contains("aria-label=\"a → c\""),
        "a chart titled by its pair"
    );
    assert!(h.contains("alert raised"), "alert spans in a legend");
    for external in ["http://", "https://", "<script", "url("] {
        assert!(!h.contains(external), "the page contains {external}");
    }
}

#[test]
fn chromium_shows_the_mesh_page_with_a_clean_console_its_cells_and_charts() {
    let Some(bin) = chromium::chromium() else {
        return;
    };
    let dir = scratch("mesh-report-chromium");
    let file = mesh_file(&dir);
    let db = dir.join("m.db");
    filled_store(&db);
    let html = dir.join("mesh.html");
    report(&file, &db, &html, &[]);
    let shot = dir.join("mesh.png");
    let b = browse(&bin, &dir, &html, &shot);
    assert!(b.ok, "chromium failed:\n{}", b.stderr);
    assert!(
        b.console().is_empty(),
        "console messages: {:#?}",
        b.console()
    );
    let bytes = std::fs::read(&shot).expect("chromium wrote the screenshot");
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    std::fs::copy(&shot, artifacts.join("mesh-report.png")).expect("screenshot kept");
    let p = pixels(&bytes);
    assert!(p.inked > 20_000, "text and cells: {} inked pixels", p.inked);
    assert!(
        p.colored > 5_000,
        "coloured cells and chart lines: {} colored pixels",
        p.colored
    );
    let built = dom(&bin, &dir, &html);
    assert!(built.ok, "chromium failed:\n{}", built.stderr);
    let d = &built.stdout;
    assert_eq!(d.matches("class=\"cell ").count(), 12, "{d}");
    assert!(cell(d, "rr", "c", "b").contains("alert"));
    assert!(cell(d, "rr", "b", "a").contains("class=\"cell same\""));
    assert_eq!(d.matches("<svg ").count(), 8, "every chart in the DOM");
    assert!(
        d.matches("<circle").count() > 6 * RUNS,
        "the charts' points"
    );
}

#[test]
fn since_charts_only_that_span_and_the_heat_map_stays() {
    let dir = scratch("mesh-report-since");
    let file = mesh_file(&dir);
    let db = dir.join("m.db");
    filled_store(&db);
    let h = report(&file, &db, &dir.join("m.html"), &["--since", "1h"]);
    assert_eq!(h.matches("class=\"cell ").count(), 12);
    assert_eq!(
        h.matches("<svg ").count(),
        0,
        "the runs are older than an hour"
    );
    assert_eq!(
        h.matches("No runs of this test in the span shown").count(),
        2
    );
    assert!(h.contains("runs since "));
}

#[test]
fn a_mesh_with_no_runs_yet_gets_a_page_saying_so() {
    let dir = scratch("mesh-report-empty");
    let file = mesh_file(&dir);
    let db = dir.join("empty.db");
    drop(Store::open(&db).unwrap());
    let h = report(&file, &db, &dir.join("e.html"), &[]);
    assert!(h.contains("No runs of mesh loop are stored yet"), "{h}");
    assert!(h.contains("<b>0</b> alerts"), "{h}");
    assert!(!h.contains("<svg"));
}

#[test]
fn a_bad_file_exits_2_at_its_place_and_a_missing_store_is_one_line() {
    let dir = scratch("mesh-report-bad");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[members]\nhosts = [\"a\", \"b\"]\n\n[[test]]\nevery = \"1s\"\ncommand = \"rr --size 0\"\n",
    )
    .unwrap();
    let f = bad.to_str().unwrap();
    let out = run(&["mesh", "report", f, "--store", "/nonexistent/m.db"], 30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{f}:6:15: command: --size")), "{err}");

    let file = mesh_file(&dir);
    let out = run(
        &["mesh", "report", &file, "--store", "/nonexistent/m.db"],
        30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no results store at /nonexistent/m.db"),
        "{err}"
    );
    assert!(!Path::new("/nonexistent/m.db").exists(), "never created");
}
