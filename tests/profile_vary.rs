//! `profile run --vary NAME=V1,V2`: one run of the profile per value of one of its variables,
//! a row of totals per point; a variable the profile lacks or an empty value is bad usage.

mod common;
use common::*;

fn profile(name: &str) -> String {
    format!("{}/profiles/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn each_value_is_one_run_with_its_totals() {
    let doc = run_json(
        &[
            "profile",
            "run",
            &profile("netperf-rr"),
            "--vary",
            "duration=100ms,200ms",
            "--json",
            "--no-store",
        ],
        60,
    );
    assert_eq!(doc["vary"], "duration");
    let points = doc["points"].as_array().unwrap();
    let values: Vec<&str> = points
        .iter()
        .map(|p| p["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["100ms", "200ms"]);
    for p in points {
        assert_eq!(p["totals"]["failed"], 0, "{p}");
        assert!(u(&p["totals"]["iterations"]) > 0, "{p}");
    }
    let text = String::from_utf8(
        run_ok(
            &[
                "profile",
                "run",
                &profile("netperf-stream"),
                "--vary",
                "duration=100ms",
                "--no-store",
            ],
            60,
        )
        .stdout,
    )
    .unwrap();
    assert!(text.contains("varying duration"), "{text}");
}

#[test]
fn a_bad_vary_is_refused_before_anything_runs() {
    let rr = profile("netperf-rr");
    let err = run_exit(&["profile", "run", &rr, "--vary", "nosuch=1,2"], 20, 2);
    assert!(
        err.contains("--vary nosuch=1") && err.contains("nosuch"),
        "{err}"
    );
    let err = run_exit(&["profile", "run", &rr, "--vary", "duration=1s,,2s"], 20, 2);
    assert!(err.contains("empty value"), "{err}");
}
