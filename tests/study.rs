//! Every study's quick form end to end: its sweeps run and are stored, and it writes a table,
//! SVG and PNG plots and an HTML page, and states findings computed from the data (the
//! findings' arithmetic is tested exactly in crates/study). window-vs-rtt builds a two-host lab
//! with a WAN link, which needs root; under CI=true it must run.

mod common;

use common::{json, run, stderr};

fn quick(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let store = dir.path().join("s.db");
    let out = run(
        &[
            "study",
            name,
            "--quick",
            "--json",
            "-o",
            out_dir.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ],
        180,
    );
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["study"], name);
    let findings = doc["findings"].as_array().unwrap();
    assert!(!findings.is_empty(), "{name}: no findings");
    for f in findings {
        let f = f.as_str().unwrap();
        assert!(!f.contains("NaN") && !f.contains("inf"), "{name}: {f}");
    }
    for s in doc["series"].as_array().unwrap() {
        assert_eq!(s["complete"], true, "{name}");
        for p in s["points"].as_array().unwrap() {
            assert!(p["error"].is_null(), "{name}: {p}");
        }
    }
    let page = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(page.contains("<svg"), "{name}: the page has plots");
    assert!(page.contains(findings[0].as_str().unwrap().split(':').next().unwrap()));
    let files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for ext in [".svg", ".png", ".txt"] {
        assert!(files.iter().any(|f| f.ends_with(ext)), "{name}: {files:?}");
    }
    let svgs = files.iter().filter(|f| f.ends_with(".svg")).count();
    assert_eq!(
        page.matches("<svg ").count(),
        svgs,
        "{name}: the page shows every plot written beside it"
    );
    let kinds: Vec<&str> = doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["kind"].as_str())
        .collect();
    if kinds.contains(&"stream") {
        assert!(
            page.contains(">CPU s/GB</th>") && page.contains(">retrans</th>"),
            "{name}"
        );
    }
    let text = std::fs::read_to_string(out_dir.join(format!("{name}.txt"))).unwrap();
    assert!(text.contains("Findings:"), "{text}");
}

#[test]
fn socket_buffers() {
    quick("socket-buffers");
}

#[test]
fn write_size() {
    quick("write-size");
}

#[test]
fn rr_payload() {
    quick("rr-payload");
}

#[test]
fn cpu_scaling() {
    quick("cpu-scaling");
}

#[test]
fn many_flows() {
    quick("many-flows");
}

#[test]
fn window_vs_rtt() {
    if !common::root_or_ci() {
        return;
    }
    quick("window-vs-rtt");
}

#[test]
fn small_packets() {
    quick("small-packets");
}

#[test]
fn the_list_describes_every_study() {
    let out = run(&["study", "--list"], 10);
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "socket-buffers",
        "write-size",
        "rr-payload",
        "cpu-scaling",
        "many-flows",
        "window-vs-rtt",
    ] {
        assert!(text.contains(name), "{text}");
    }
}
