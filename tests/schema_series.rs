//! The JSON of the commands over several runs — series (sweeps, iterated tests, `show sN`),
//! studies, comparisons and store listings — validates against docs/schema/series.schema.json,
//! each document against its own definition, and the schema rejects what it should.

mod common;

use common::{assert_says, json, quick_study, run, stderr, words};
use serde_json::{json, Value};
use std::process::Output;

/// The schema under test.
const SCHEMA: &str = include_str!("../docs/schema/series.schema.json");

/// Errors of `doc` against the schema's definition `def`, or against the whole schema (any of
/// its documents) when `def` is `None`.
fn errors(doc: &Value, def: Option<&str>) -> Vec<String> {
    let mut schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    if let Some(def) = def {
        let root = schema.as_object_mut().expect("the schema is an object");
        root.remove("oneOf");
        root.insert("$ref".into(), Value::String(format!("#/$defs/{def}")));
    }
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

/// Asserts that `doc` is a valid `def` document, and valid against the schema as a whole.
fn assert_valid_as(doc: &Value, def: &str, what: &str) {
    let own = errors(doc, Some(def));
    assert!(own.is_empty(), "{what} as {def}: {own:?}");
    let any = errors(doc, None);
    assert!(any.is_empty(), "{what} against the whole schema: {any:?}");
}

/// Runs fathom with `args` on the store `db`, expecting success, and parses its JSON.
fn doc(db: &str, args: &[&str], secs: u64) -> Value {
    let out: Output = run(&[args, &["--store", db]].concat(), secs);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    json(&out)
}

/// Store ids of a series' runs, point by point.
fn run_ids(series: &Value) -> Vec<i64> {
    series["points"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["runs"].as_array().cloned().unwrap_or_default())
        .filter_map(|r| r.as_i64())
        .collect()
}

#[test]
fn sweeps_iterations_listings_and_comparisons_match_the_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("fathom.db");
    let db = db.to_str().expect("a UTF-8 path");

    let sweep = doc(
        db,
        &words("sweep stream -t 0.3s --vary write=64K,1M --json"),
        30,
    );
    assert_valid_as(&sweep, "series", "sweep");
    assert_eq!(sweep["points"].as_array().map(Vec::len), Some(2));

    let stream_args = words("stream -t 0.4s -i 0.1s --iterations 2 --json");
    let first = doc(db, &stream_args, 30);
    assert_valid_as(&first, "series", "iterated stream");
    let second = doc(db, &stream_args, 30);
    assert_valid_as(&second, "series", "second iterated stream");
    let rr = doc(db, &["rr", "-t", "0.3s", "--iterations", "2", "--json"], 30);
    assert_valid_as(&rr, "series", "iterated rr");

    let id = first["id"].as_str().expect("a stored series has an id");
    let shown = doc(db, &["show", id, "--json"], 10);
    assert_valid_as(&shown, "series", "show");
    assert_eq!(shown, first, "show prints the series as it was printed");

    let runs = doc(db, &["runs", "--json"], 10);
    assert_valid_as(&runs, "run_listing", "runs");
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(8));
    let series = doc(db, &["runs", "--series", "--json"], 10);
    assert_valid_as(&series, "series_listing", "runs --series");
    assert_eq!(series["series"].as_array().map(Vec::len), Some(4));

    let ids = run_ids(&first);
    assert_eq!(ids.len(), 2, "{first}");
    let (a, b) = (ids[0].to_string(), ids[1].to_string());
    let by_runs = doc(db, &["compare", &a, &b, "--json"], 10);
    assert_valid_as(&by_runs, "comparison", "compare runs");
    assert_eq!(by_runs["rows"][0]["basis"], "intervals");
    let other = second["id"].as_str().expect("an id");
    let by_series = doc(db, &["compare", id, other, "--level", "99", "--json"], 10);
    assert_valid_as(&by_series, "comparison", "compare series");
    assert_eq!(by_series["rows"][0]["basis"], "iterations");
    assert_eq!(by_series["level"], 0.99);

    let mixed = run(&["compare", &a, id, "--json", "--store", db], 10);
    assert_eq!(mixed.status.code(), Some(2), "{}", stderr(&mixed));
    assert_valid_as(
        &json(&mixed),
        "error_document",
        "compare a run with a series",
    );
    compare_refusals_and_differences(db, (&sweep, &first, &rr), (&a, &b));
}

/// `compare` refuses results of different kinds (exit 2), says when two series share no
/// point, and names the settings two runs differ in (JSON and a warning) but not when alike.
fn compare_refusals_and_differences(
    db: &str,
    (sweep, first, rr): (&Value, &Value, &Value),
    (a, b): (&str, &str),
) {
    let refused = |x: &str, y: &str, code: i32| {
        let out = run(&["compare", x, y, "--store", db], 10);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{x} {y}: {err}");
        err
    };
    let rr_run = run_ids(rr)[0].to_string();
    let (rr_id, first_id) = (rr["id"].as_str().unwrap(), first["id"].as_str().unwrap());
    for (x, y) in [(a, rr_run.as_str()), (first_id, rr_id)] {
        let err = refused(x, y, 2);
        assert!(
            err.contains("(stream) and") && err.contains("(rr) are of different kinds"),
            "{err}"
        );
    }
    let sweep_id = sweep["id"].as_str().unwrap();
    let err = refused(sweep_id, first_id, 1);
    assert!(
        err.contains("share no points") && err.contains("write=64K; write=1M"),
        "{err}"
    );
    let points = run_ids(sweep);
    let (p64, p1m) = (points[0].to_string(), points[1].to_string());
    let out = run(&["compare", &p64, &p1m, "--json", "--store", db], 10);
    let d = json(&out);
    assert_valid_as(&d, "comparison", "compare runs that differ");
    assert_eq!(
        d["differences"],
        json!([{"setting": "write_size", "a": "64K", "b": "1M"}])
    );
    assert_says(&out, "not set up alike (write_size 64K vs 1M)");
    let alike = run(&["compare", a, b, "--json", "--store", db], 10);
    assert_eq!(json(&alike)["differences"], json!([]));
    assert!(
        !stderr(&alike).contains("not set up alike"),
        "{}",
        stderr(&alike)
    );
}

#[test]
fn a_quick_study_matches_the_schema() {
    let (_dir, _, study) = quick_study("cpu-scaling", &[], 60);
    assert_valid_as(&study, "study", "study cpu-scaling --quick");
    let files = study["files"].as_array().expect("files");
    assert!(files
        .iter()
        .filter_map(Value::as_str)
        .all(|f| std::path::Path::new(f).is_file()));
}

/// A small series as fathom writes it.
fn series_example() -> Value {
    let stat = json!({
        "name": "bits_per_second", "n": 2, "mean": 10.0, "stddev": 1.0, "ci_low": 1.0,
        "ci_high": 19.0, "ci_level": 0.95, "min": 9.0, "median": 10.0, "max": 11.0
    });
    json!({
        "schema_version": 1, "document": "series", "fathom_version": "0.1.0", "id": "s3",
        "kind": "stream", "args": ["-t", "1s"],
        "axes": [{"name": "write", "values": ["64K"]}],
        "iterations": 2, "min_iterations": 2, "confidence": {"level": 0.99, "width": 0.05},
        "primary_metric": "bits_per_second",
        "points": [{
            "params": [{"name": "write", "value": "64K"}], "runs": [4, 5],
            "values": [9.0, 11.0], "metrics": [stat], "error": null,
            "target_met": false
        }],
        "started_unix_s": 1.0, "complete": true
    })
}

#[test]
fn the_schema_rejects_extra_fields_wrong_types_and_non_finite_figures() {
    let good = series_example();
    assert_valid_as(&good, "series", "the example");

    let mut extra = good.clone();
    extra["points"][0]["note"] = json!("not in the schema");
    assert!(!errors(&extra, Some("series")).is_empty(), "an extra field");
    assert!(
        !errors(&extra, None).is_empty(),
        "an extra field, any document"
    );

    let mut text = good.clone();
    text["points"][0]["metrics"][0]["mean"] = json!("10");
    assert!(!errors(&text, None).is_empty(), "a string for a number");

    let mut nan = good.clone();
    nan["points"][0]["metrics"][0]["ci_high"] = Value::Null;
    assert!(!errors(&nan, None).is_empty(), "null (NaN) for a figure");

    let mut name = good;
    name["points"][0]["metrics"][0]["name"] = json!("bogus_per_second");
    assert!(!errors(&name, None).is_empty(), "an unknown metric");

    let row = json!({
        "point": "the test", "metric": "bits_per_second", "a": 1.0, "b": 2.0,
        "change_percent": 100.0, "p": null, "significant": null, "basis": "intervals"
    });
    let comparison = json!({"document": "comparison", "a": "1", "b": "2", "level": 0.95,
        "differences": [{"setting": "parallel", "a": "1", "b": "4"}], "rows": [row]});
    assert_valid_as(&comparison, "comparison", "a comparison");
    let mut wrong = comparison;
    wrong["rows"][0]["significant"] = json!("yes");
    assert!(!errors(&wrong, None).is_empty(), "a string for a boolean");
}
