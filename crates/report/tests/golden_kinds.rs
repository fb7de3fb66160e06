//! Golden tests of every kind: the table, CSV and JSON of the fake run as stream, rr, crr,
//! udp_rr, udp, file, a profile group, and TLS over stream and crr, byte for byte, so that
//! reshaping a kind's sections cannot change what any kind prints. Every kind of the registry
//! (`fathom_proto::kind::KINDS`) must have its fake run here.

mod common;

use fathom_proto::kind::KINDS;
use fathom_proto::plan::KindId;
use fathom_report::fake::{self, kinds};
use fathom_report::{build, csv, json, table, Report, RunData};

/// The report of `run` with fathom's version pinned.
fn report(run: &RunData) -> Report {
    let mut r = build(run);
    r.fathom_version = "0.0.0-test".into();
    r
}

/// Every kind's fake run, by snapshot name.
fn runs() -> Vec<(&'static str, RunData)> {
    vec![
        ("stream", fake::run_data(2, false)),
        ("rr", kinds::request_response(KindId::Rr, 2)),
        ("crr", kinds::request_response(KindId::Crr, 1)),
        ("udp_rr", kinds::request_response(KindId::UdpRr, 1)),
        ("udp", kinds::udp()),
        ("file", kinds::file()),
        ("profile", fake::profile::profile()),
        ("tls_stream", kinds::tls(fake::run_data(2, false))),
        (
            "tls_crr",
            kinds::tls(kinds::request_response(KindId::Crr, 2)),
        ),
    ]
}

/// A renderer: a report in, bytes out.
type Render = fn(&Report) -> Vec<u8>;

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("renderers write UTF-8")
}

#[test]
fn table_csv_and_json_of_every_kind() {
    let formats: [(&str, Render); 3] = [
        ("table", table::render),
        ("csv", csv::render),
        ("json", json::render),
    ];
    for (name, run) in runs() {
        let r = report(&run);
        for (format, render) in formats {
            insta::assert_snapshot!(format!("{format}_{name}"), text(render(&r)));
        }
    }
}

#[test]
fn json_of_every_kind_round_trips() {
    for (name, run) in runs() {
        let r = report(&run);
        let back: Report = serde_json::from_slice(&json::render(&r)).expect("valid JSON");
        assert_eq!(back, r, "{name}");
    }
}

#[test]
fn json_of_every_kind_follows_the_schema() {
    for (_, run) in runs() {
        common::assert_valid(&common::parse(&json::render(&report(&run))));
    }
}

#[test]
fn every_kind_has_a_fake_run() {
    let runs = runs();
    for d in KINDS {
        assert!(
            runs.iter().any(|(_, run)| run.plan.kind.id() == d.id),
            "no fake run of the kind {}: add one to crates/report/src/fake and to runs()",
            d.name
        );
    }
}
