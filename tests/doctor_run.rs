//! `fathom doctor --run N` and `--advise` on loopback: the advice member is absent without
//! `--advise` and valid against both schemas with it, the table ends with the ranked list, and
//! bad `--run` values are refused (2) or not found (1).

mod common;

use common::{
    assert_doctor_valid, assert_valid, json, rerun_check, run, run_exit_says, run_json, stderr,
    strs, words,
};
use serde_json::Value;

/// The doctor schema.
const DOCTOR_SCHEMA: &str = include_str!("../docs/schema/doctor.schema.json");

fn store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db").to_string_lossy().into_owned();
    (dir, path)
}

#[test]
fn advice_is_absent_without_advise_and_valid_with_it() {
    let plain = json(&run(&["stream", "-t", "300ms", "--no-store", "--json"], 60));
    assert!(plain.get("advice").is_none(), "no advice unless asked");
    let doc = json(&run(
        &["stream", "-t", "300ms", "--no-store", "--json", "--advise"],
        60,
    ));
    assert_valid(&doc, "stream --advise --json");
    let advice = doc["advice"].as_array().expect("an advice array");
    let schema: Value = serde_json::from_str(DOCTOR_SCHEMA).unwrap();
    let ids = schema["$defs"]["advice"]["properties"]["id"]["enum"].clone();
    let ids: Vec<&str> = ids
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        ids,
        fathom_advisor::diagnose::IDS,
        "the schema names every cause"
    );
    assert!(
        advice.iter().all(|a| a["severity"] == "note"),
        "a healthy loopback stream gives notes at most: {advice:?}"
    );
}

#[test]
fn the_table_ends_with_the_advice_and_doctor_explains_the_stored_run() {
    let (_dir, db) = store();
    let out = run(
        &["stream", "-t", "300ms", "-q", "--store", &db, "--advise"],
        60,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text
        .rfind("\nadvice: ")
        .expect("an advice list after the table");
    assert!(text[at..].contains(" warning(s), "), "{text}");
    let out = run(&["doctor", "--run", "1", "--store", &db, "--json"], 30);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_doctor_valid(&doc);
    assert_eq!(doc["run"], 1);
    assert!(doc["advice"].is_array(), "{doc}");
    let out = run(&["doctor", "--run", "1", "--store", &db], 30);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nrun 1\nadvice: "), "{text}");
}

#[test]
fn bad_runs_are_refused() {
    let (_dir, db) = store();
    run(&["stream", "-t", "100ms", "-q", "--store", &db], 60);
    for (arg, code) in [("x", 2), ("s1", 2), ("0", 2), ("99", 1)] {
        let out = run(&["doctor", "--run", arg, "--store", &db], 30);
        assert_eq!(
            out.status.code(),
            Some(code),
            "--run {arg}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).is_empty(), "--run {arg} says why");
    }
    let once = words("stream --advise --iterations 2 -t 100ms");
    run_exit_says(&once, 30, 2, "--advise explains one run");
}

/// `--advise --verify-advice` on a test: the top finding (drops in a 4K receive buffer) is
/// checked by re-running the test with its option (`--buffer 4M`) and as typed, alternately;
/// the re-runs leave out the options that asked for the check, and the second runs used the
/// buffer (what was applied is asserted, never a speed).
#[test]
fn verify_advice_reruns_the_test_with_the_top_findings_option() {
    let args = "udp -t 300ms --size 1400 --buffer 4K --no-store --json --advise \
                --verify-advice --iterations 2";
    let doc = run_json(&words(args), 120);
    assert_valid(&doc, "udp --advise --verify-advice --json");
    let c = rerun_check(&doc, "udp_socket_buffer", "--buffer 4M");
    assert_eq!(c["after_test"]["rcvbuf"], 4 << 20, "{c:#}");
    let before = strs(&c["before_args"]);
    assert!(before.contains(&"4K"), "{before:?}");
    for own in ["--advise", "--verify-advice", "--iterations"] {
        assert!(!before.contains(&own), "{own} left out: {before:?}");
    }
    assert_eq!(c["before"].as_array().unwrap().len(), 2);
    assert_eq!(c["after"].as_array().unwrap().len(), 2);
}

#[test]
fn verify_advice_is_refused_without_advise_or_with_a_bad_count() {
    for args in [
        &["stream", "-t", "100ms", "--verify-advice"][..],
        &[
            "stream",
            "-t",
            "100ms",
            "--advise",
            "--verify-advice",
            "--iterations",
            "50",
        ],
    ] {
        let out = run(args, 30);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}
