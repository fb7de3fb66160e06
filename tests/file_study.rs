//! The file-copy study across a lab WAN link (`fathom study file-copy --quick --lab WAN`): every
//! sweep runs from h1 to h2 across the link (its round trip shows the link's delay), and the
//! findings say why.

mod common;
use common::*;

#[test]
fn the_file_copy_study_runs_across_a_lab_wan_link() {
    if !root_or_ci() {
        return;
    }
    let (_dir, _, doc) = quick_study("file-copy", &["--lab", "delay=2ms"], 300);
    for s in doc["series"].as_array().unwrap() {
        let args = strs(&s["args"]);
        assert!(
            args.windows(2).any(|w| w == ["--clients", "h1"]),
            "{args:?}"
        );
        for p in s["points"].as_array().unwrap() {
            let rtt = item(&p["metrics"], "name", "rtt_us")["median"]
                .as_f64()
                .unwrap();
            assert!(rtt >= 4000.0, "{rtt} µs: the 2 ms each way of the link");
        }
    }
    let findings = doc["findings"].to_string();
    assert!(
        findings.contains("Why: at") && findings.contains("disk reads and as many writes per MB"),
        "{findings}"
    );
}
