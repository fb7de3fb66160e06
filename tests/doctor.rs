//! `fathom doctor` on this host and inside a network namespace made for the test: exit 0
//! whatever it finds, JSON that matches docs/schema/doctor.schema.json, 2 for an unknown
//! interface, and a namespaced sysctl set low is cited.

mod common;

use common::{json, root_or_ci, run, run_program, stderr};
use serde_json::Value;

/// The schema under test.
const SCHEMA: &str = include_str!("../docs/schema/doctor.schema.json");

/// Asserts that `doc` matches the schema (`what` names the case).
fn assert_valid(doc: &Value, what: &str) {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

#[test]
fn doctor_lists_this_hosts_findings_and_exits_0() {
    let out = run(&["doctor"], 30);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("fathom doctor: "), "{text}");
    let notes = text.find(". note [").unwrap_or(text.len());
    assert!(
        text.find(". warning [").is_none_or(|w| w < notes),
        "warnings first: {text}"
    );
}

#[test]
fn doctor_json_matches_its_schema() {
    let out = run(&["doctor", "--json"], 30);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_valid(&doc, "fathom doctor --json");
    assert_eq!(doc["document"], "doctor");
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let ids: Vec<&str> = schema["$defs"]["finding"]["properties"]["id"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(ids, fathom_advisor::IDS, "the schema names every finding");
    let bad = serde_json::json!({"schema_version": 1, "document": "doctor"});
    let schema = jsonschema::validator_for(&schema).unwrap();
    assert!(
        !schema.is_valid(&bad),
        "the schema rejects a document without findings"
    );
}

#[test]
fn an_unknown_interface_is_bad_usage_naming_the_real_ones() {
    let out = run(&["doctor", "--iface", "no-such-if0"], 30);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--iface: no interface 'no-such-if0'"), "{err}");
    assert!(err.contains("it has: "), "{err}");
    let out = run(&["doctor", "--iface", "no-such-if0", "--json"], 30);
    assert_eq!(out.status.code(), Some(2));
    assert_valid(&json(&out), "the error document");
}

/// A network namespace made for one test, deleted when dropped (the test passing or not).
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        let name = format!("fathom-doctor-{}", std::process::id());
        let out = run_program("ip", &["netns", "add", &name], 10);
        assert!(out.status.success(), "ip netns add: {}", stderr(&out));
        Netns(name)
    }

    /// Runs `program args` inside the namespace (bounded).
    fn exec(&self, program: &str, args: &[&str], secs: u64) -> std::process::Output {
        let argv = [&["netns", "exec", self.0.as_str(), program][..], args].concat();
        run_program("ip", &argv, secs)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .status();
    }
}

#[test]
fn a_low_somaxconn_in_a_namespace_is_cited() {
    if !root_or_ci() {
        return;
    }
    let ns = Netns::new();
    let set = ns.exec("sh", &["-c", "echo 64 > /proc/sys/net/core/somaxconn"], 10);
    assert!(set.status.success(), "setting somaxconn: {}", stderr(&set));
    let out = ns.exec(env!("CARGO_BIN_EXE_fathom"), &["doctor", "--json"], 30);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_valid(&doc, "doctor in a namespace");
    let found = doc["findings"].as_array().expect("findings");
    let hit = found
        .iter()
        .find(|f| f["id"] == "somaxconn")
        .unwrap_or_else(|| panic!("somaxconn 64 is cited: {doc:#}"));
    assert_eq!(hit["source"], "net.core.somaxconn");
    assert_eq!(hit["value"], "64");
    assert_eq!(hit["severity"], "warning");
    assert_eq!(hit["change"], "sysctl -w net.core.somaxconn=4096");
}
