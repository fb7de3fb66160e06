//! Reports written at schema version 1 (flat request/response fields) read into the current
//! shape with every figure kept, and a request/response report validates against the schema.

mod common;

use common::{assert_valid, parse, report};
use fathom_report::{json, model, Report};
use serde_json::{json, Value};

/// `doc` (a current document) as schema 1 wrote it: each `rr` object flattened into its parent,
/// `null` fields where it was `null`.
fn as_v1(doc: &mut Value) {
    let fields: [(&str, &[&str]); 4] = [
        (
            "test",
            &[
                "request_size",
                "response_size",
                "burst",
                "rate",
                "transactions",
                "udp_timeout_ms",
            ],
        ),
        (
            "summary",
            &[
                "transactions",
                "transactions_per_second",
                "connections_per_second",
                "answered",
                "lost",
                "latency_us",
                "one_way_estimate_us",
                "cpu_us_per_transaction",
                "segments_per_transaction",
            ],
        ),
        ("flow", &["transactions", "transactions_per_second"]),
        (
            "interval",
            &[
                "transactions_per_second",
                "latency_p50_us",
                "latency_p99_us",
                "lost",
            ],
        ),
    ];
    let flatten = |o: &mut Value, names: &[&str]| {
        let rr = o["rr"].take();
        let map = o.as_object_mut().unwrap();
        map.remove("rr");
        for n in names {
            map.insert(n.to_string(), rr.get(n).cloned().unwrap_or(Value::Null));
        }
    };
    flatten(&mut doc["test"], fields[0].1);
    flatten(&mut doc["summary"], fields[1].1);
    for f in doc["flows"].as_array_mut().unwrap() {
        flatten(f, fields[2].1);
    }
    for i in doc["intervals"].as_array_mut().unwrap() {
        flatten(i, fields[3].1);
    }
    doc["schema_version"] = json!(1);
}

/// The fake report relabelled as a udp_rr run with every request/response figure set.
fn rr_report() -> Report {
    let mut r = report(2, false);
    r.test.kind = "udp_rr".into();
    r.test.rr = Some(model::RrTest {
        request_size: 64,
        response_size: 1024,
        burst: Some(4),
        rate: None,
        transactions: Some(1000),
        udp_timeout_ms: Some(2.5),
    });
    r.summary.rr = Some(model::RrSummary {
        transactions: 990,
        transactions_per_second: 495.0,
        connections_per_second: None,
        answered: 995,
        lost: Some(10),
        latency_us: Some(model::Latency {
            min: 10.0,
            p50: 20.0,
            p90: 30.0,
            p99: 40.0,
            p999: 50.0,
            max: 60.0,
            mean: 22.0,
            stddev: 5.0,
        }),
        one_way_estimate_us: Some(10.0),
        cpu_us_per_transaction: model::ServiceDemand {
            local: 3.0,
            remote: 4.0,
        },
        segments_per_transaction: None,
    });
    for f in &mut r.flows {
        f.rr = Some(model::RrFlow {
            transactions: 495,
            transactions_per_second: 247.5,
        });
    }
    for i in &mut r.intervals {
        i.rr = Some(model::RrInterval {
            transactions_per_second: 500.0,
            latency_p50_us: Some(20.0),
            latency_p99_us: None,
            lost: Some(3),
        });
    }
    r
}

#[test]
fn a_request_response_report_validates() {
    assert_valid(&parse(&json::render(&rr_report())));
}

#[test]
fn schema_1_documents_read_into_the_current_shape() {
    for r in [report(1, false), report(4, true), rr_report()] {
        let mut doc = parse(&json::render(&r));
        as_v1(&mut doc);
        let back = json::read(&doc.to_string()).expect("a schema 1 document reads");
        assert_eq!(back, r, "{}", r.test.kind);
    }
}

#[test]
fn current_documents_read_back_unchanged() {
    let r = rr_report();
    assert_eq!(
        json::read(&String::from_utf8(json::render(&r)).unwrap()).unwrap(),
        r
    );
}
