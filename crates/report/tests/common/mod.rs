//! Shared by the report tests (each test file uses part of it): the fake run's report with
//! fathom's version pinned so that snapshots survive version bumps, and the JSON schema check.
#![allow(dead_code)]

use fathom_report::{build, fake, Report};
use serde_json::Value;

/// The report of the fake run with `flows` flows per direction.
pub fn report(flows: u32, bidir: bool) -> Report {
    let mut r = build(&fake::run_data(flows, bidir));
    r.fathom_version = "0.0.0-test".into();
    r
}

/// A validator for docs/schema/result.schema.json.
pub fn validator() -> jsonschema::Validator {
    let text = include_str!("../../../../docs/schema/result.schema.json");
    let schema: Value = serde_json::from_str(text).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the schema is a valid draft 2020-12 schema")
}

/// Panics with every violation when `doc` does not validate against the schema.
pub fn assert_valid(doc: &Value) {
    let v = validator();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// `bytes` parsed as JSON.
pub fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}
