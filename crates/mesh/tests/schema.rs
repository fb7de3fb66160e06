//! The status document validates against docs/schema/mesh-status.schema.json, in every shape
//! it takes, and the schema refuses what it should.

use fathom_mesh::status::{Counts, Culprit, MemberStatus, PairStatus, Status, TestStatus};
use serde_json::Value;

const SCHEMA: &str = include_str!("../../../docs/schema/mesh-status.schema.json");

fn errors(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

fn full() -> Status {
    let mut s = Status::new("lab", 1.5e9);
    s.members = vec![
        MemberStatus {
            name: "h1".into(),
            ..MemberStatus::default()
        },
        MemberStatus {
            name: "h3".into(),
            down: true,
            down_since_unix_s: Some(1.4e9),
            reason: Some("connection refused".into()),
        },
    ];
    s.tests = vec![TestStatus {
        name: "rr".into(),
        kind: "rr".into(),
        class: "normal".into(),
        figure: "latency_p50_us".into(),
        higher_is_worse: true,
        every_s: 1.0,
        counts: Some(Counts {
            started: 10,
            skipped: 1,
            down: 2,
        }),
    }];
    s.pairs = vec![PairStatus {
        test: "rr".into(),
        source: "h1".into(),
        target: "h3".into(),
        runs: 12,
        failed: 1,
        last_unix_s: Some(1.5e9),
        value: Some(60_000.0),
        baseline: Some(20_000.0),
        change_percent: Some(200.0),
        band_low: Some(15_000.0),
        band_high: Some(25_000.0),
        alert: true,
        alert_since_unix_s: Some(1.49e9),
    }];
    s.finish(3);
    s.culprits.push(Culprit {
        member: "h3".into(),
        alerting: 4,
        partners: 4,
    });
    s
}

#[test]
fn every_shape_of_the_status_validates() {
    let full = serde_json::to_value(full()).unwrap();
    assert_eq!(errors(&full), Vec::<String>::new());
    let empty = serde_json::to_value(Status::new("empty", 0.0)).unwrap();
    assert_eq!(errors(&empty), Vec::<String>::new());
}

#[test]
fn the_schema_refuses_what_it_should() {
    let good = serde_json::to_value(full()).unwrap();
    let mut missing = good.clone();
    missing["pairs"][0].as_object_mut().unwrap().remove("alert");
    assert!(!errors(&missing).is_empty());
    let mut class = good.clone();
    class["tests"][0]["class"] = "bulk".into();
    assert!(!errors(&class).is_empty());
    let mut extra = good;
    extra["surprise"] = 1.into();
    assert!(!errors(&extra).is_empty());
}
