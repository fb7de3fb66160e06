//! Every study's quick form end to end: its sweeps run and are stored, and it writes a table,
//! SVG and PNG plots and an HTML page, and states findings computed from the data (the
//! findings' arithmetic is tested exactly in crates/study). window-vs-rtt builds a two-host lab
//! with a WAN link, which needs root; under CI=true it must run.

mod common;

use common::{quick_study, root_or_ci, run, strs};

/// Runs the quick form of study `name` and checks its outputs; returns its JSON document.
fn quick(name: &str) -> serde_json::Value {
    let (_dir, out_dir, doc) = quick_study(name, &[], 180);
    assert_eq!(doc["study"], name);
    let findings = doc["findings"].as_array().unwrap();
    assert!(!findings.is_empty(), "{name}: no findings");
    for f in findings {
        let f = f.as_str().unwrap();
        assert!(!f.contains("NaN") && !f.contains("inf"), "{name}: {f}");
    }
    for s in doc["series"].as_array().unwrap() {
        assert_eq!(s["complete"], true, "{name}");
        assert_eq!(
            (&s["command"][0], &s["command"][1]),
            (&"study".into(), &name.into()),
            "{name}: the study's command line, as typed"
        );
        for p in s["points"].as_array().unwrap() {
            let unavailable = p["error"]
                .as_str()
                .is_some_and(|e| e.starts_with(fathom_study::UNAVAILABLE));
            assert!(p["error"].is_null() || unavailable, "{name}: {p}");
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
    let first = files.iter().find(|f| f.ends_with(".svg")).unwrap();
    let drawn = std::fs::read_to_string(out_dir.join(first)).unwrap();
    assert!(
        drawn.contains(&format!(": fathom study {name} --quick --json")),
        "{name}: the plot's footer is the study's command"
    );
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
    doc
}

/// [`quick`] where the study builds a lab: None (the test skips) without root.
fn quick_in_a_lab(name: &str) -> Option<serde_json::Value> {
    root_or_ci().then(|| quick(name))
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
fn file_copy() {
    quick("file-copy");
}

#[test]
fn window_vs_rtt() {
    quick_in_a_lab("window-vs-rtt");
}

#[test]
fn small_packets() {
    quick("small-packets");
}

/// Clear, TLS and IPsec (strongSwan; in user space where the kernel has no ESP) each find the
/// streams that fill a 200M lab link or say they cannot; IPsec says where its ESP ran.
#[test]
fn streams_to_line_rate() {
    let Some(doc) = quick_in_a_lab("streams-to-line-rate") else {
        return;
    };
    let findings = strs(&doc["findings"]);
    for mode in ["clear: ", "TLS: ", "IPsec aes-256-gcm: "] {
        assert!(
            findings.iter().any(|f| f.starts_with(mode)),
            "{mode}{findings:?}"
        );
    }
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("The cheapest way") || f.starts_with("No mode filled")),
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("IPsec aes-256-gcm: ESP ran in ")),
        "{findings:?}"
    );
    let series = doc["series"].as_array().unwrap();
    assert_eq!(series.len(), 3);
    for s in &series[..2] {
        let counts: Vec<u32> = s["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["params"][1]["value"].as_str().unwrap().parse().unwrap())
            .collect();
        assert_eq!(counts.first(), Some(&1), "the search starts at one stream");
        assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    }
}

#[test]
fn the_list_describes_every_study() {
    let out = run(&["study", "--list"], 10);
    let text = String::from_utf8_lossy(&out.stdout);
    for study in fathom_study::all() {
        assert!(text.contains(study.name), "{text}");
    }
}
