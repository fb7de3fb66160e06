//! Reports written at schema version 1 (flat request/response fields) read into the current
//! shape with every figure kept, and a request/response report validates against the schema.

mod common;

use common::{assert_valid, parse, report};
use fathom_report::{fake, json, model, Report};

/// The fake report relabelled as a udp_rr run with every request/response figure set.
fn rr_report() -> Report {
    let mut r = report(2, false);
    r.test.kind = "udp_rr".into();
    r.test.section = Some(model::KindTest::Rr(model::RrTest {
        request_size: 64,
        response_size: 1024,
        burst: Some(4),
        rate: None,
        transactions: Some(1000),
        udp_timeout_ms: Some(2.5),
    }));
    r.summary.section = Some(model::KindSummary::Rr(model::RrSummary {
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
    }));
    for f in &mut r.flows {
        f.section = Some(model::KindFlow::Rr(model::RrFlow {
            transactions: 495,
            transactions_per_second: 247.5,
        }));
    }
    for i in &mut r.intervals {
        i.section = Some(model::KindInterval::Rr(model::RrInterval {
            transactions_per_second: 500.0,
            latency_p50_us: Some(20.0),
            latency_p99_us: None,
            lost: Some(3),
        }));
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
        let back = json::read(&fake::schema_1_json(&r)).expect("a schema 1 document reads");
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
