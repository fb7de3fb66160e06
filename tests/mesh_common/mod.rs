//! Helpers of the mesh tests (`tests/mesh_run.rs`, `tests/lab_mesh.rs`): the class rules
//! checked from the stored start and end times, and the status document checked against its
//! schema.
#![allow(dead_code)]

use fathom_store::MeshRun;
use serde_json::Value;

/// Every pair of tests that overlapped on one member against the class rules (exclusive with
/// exclusive or normal), from their stored start and end times, in words.
pub fn overlaps(runs: &[MeshRun]) -> Vec<String> {
    let mut found = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            let conflicting = matches!(
                (a.class.as_str(), b.class.as_str()),
                ("exclusive", "exclusive" | "normal") | ("normal", "exclusive")
            );
            let shared = [&a.source, &a.target]
                .into_iter()
                .find(|m| **m == b.source || **m == b.target);
            let overlap = a.started_unix_s < b.ended_unix_s && b.started_unix_s < a.ended_unix_s;
            if let (true, Some(m), true) = (conflicting, shared, overlap) {
                found.push(format!(
                    "{m}: {} {}->{} [{:.3}, {:.3}] and {} {}->{} [{:.3}, {:.3}]",
                    a.test,
                    a.source,
                    a.target,
                    a.started_unix_s,
                    a.ended_unix_s,
                    b.test,
                    b.source,
                    b.target,
                    b.started_unix_s,
                    b.ended_unix_s
                ));
            }
        }
    }
    found
}

/// Asserts that `doc` validates against docs/schema/mesh-status.schema.json.
pub fn assert_status_valid(doc: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/schema/mesh-status.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{doc:#}");
}

/// The pairs of test `test` in a status document, as (source, target).
pub fn pairs_of(doc: &Value, test: &str) -> Vec<(String, String)> {
    doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["test"] == test)
        .map(|p| {
            (
                p["source"].as_str().unwrap().to_string(),
                p["target"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
