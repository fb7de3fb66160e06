//! The JSON output contract: every document `--json` prints validates against
//! docs/schema/result.schema.json, and the fields users script against exist.

mod common;

use common::{assert_valid, parse, report, validator};
use fathom_report::json;
use fathom_report::model::kind::KindValue;
use fathom_report::model::{KindFlow, KindInterval, KindSummary, KindTest};
use serde_json::Value;

#[test]
fn fake_reports_validate() {
    for (flows, bidir) in [(1, false), (4, true), (80, false)] {
        assert_valid(&parse(&json::render(&report(flows, bidir))));
    }
}

#[test]
fn error_document_validates() {
    assert_valid(&parse(&json::error_document(
        "cannot reach agent 192.0.2.10:5301",
    )));
}

#[test]
fn schema_rejects_what_is_not_a_report() {
    let v = validator();
    let mut doc = parse(&json::render(&report(1, false)));
    doc["unexpected"] = Value::Bool(true);
    assert!(!v.is_valid(&doc), "unknown top-level field accepted");
    let mut doc = parse(&json::render(&report(1, false)));
    doc["summary"]["bits_per_second"] = Value::Null;
    assert!(!v.is_valid(&doc), "null throughput accepted");
    let mut doc = parse(&json::render(&report(1, false)));
    doc["summary"]["extra"] = Value::from(1);
    assert!(!v.is_valid(&doc), "unknown summary field accepted");
    let mut doc = parse(&json::render(&report(1, false)));
    doc["summary"]["retransmits"] = Value::from(-1);
    assert!(!v.is_valid(&doc), "negative count accepted");
    assert!(
        !v.is_valid(&serde_json::json!({ "schema_version": 1 })),
        "empty document accepted"
    );
}

#[test]
fn required_paths_exist() {
    let doc = parse(&json::render(&report(2, true)));
    let number = |pointer: &str| {
        assert!(
            doc.pointer(pointer).is_some_and(Value::is_number),
            "{pointer} is not a number"
        );
    };
    for p in [
        "bits_per_second",
        "sender_bits_per_second",
        "bytes",
        "retransmits",
        "cpu/local/total",
        "cpu/remote/total",
    ] {
        number(&format!("/summary/{p}"));
    }
    for p in ["effective_send", "effective_recv"] {
        number(&format!("/summary/buffers/{p}"));
    }
    let buffers = &doc["summary"]["buffers"];
    assert!(buffers["requested"].is_object() && buffers["clamped"].is_boolean());
    for key in ["send", "recv"] {
        assert!(
            buffers["requested"].get(key).is_some(),
            "buffers.requested.{key} missing"
        );
    }
    let flows = doc["flows"].as_array().expect("flows is an array");
    assert_eq!(flows.len(), 4);
    assert!(flows.iter().all(|f| f["bits_per_second"].is_number()));
    let intervals = doc["intervals"].as_array().expect("intervals is an array");
    assert_eq!(intervals.len(), 4);
    for iv in intervals {
        assert!(
            ["start", "end", "bits_per_second"]
                .iter()
                .all(|k| iv[k].is_number()),
            "{iv}"
        );
    }
}

/// The schema declares every kind's key in each record a kind extends, so that a kind added to
/// the code cannot print a member its records refuse (`additionalProperties: false`).
#[test]
fn schema_declares_every_kinds_members() {
    let schema = parse(include_bytes!("../../../docs/schema/result.schema.json"));
    let records = [
        ("test", KindTest::KEYS),
        ("summary", KindSummary::KEYS),
        ("flow", KindFlow::KEYS),
        ("interval", KindInterval::KEYS),
    ];
    for (record, keys) in records {
        let props = &schema["$defs"][record]["properties"];
        for key in keys {
            assert!(
                props.get(key).is_some(),
                "docs/schema/result.schema.json: $defs/{record} does not declare the kind member '{key}'"
            );
        }
    }
}
