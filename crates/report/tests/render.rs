//! Golden tests: the table, CSV and JSON of the fake run, byte for byte.

mod common;

use common::report;
use fathom_report::{csv, json, table};

/// A renderer: a report in, its bytes out.
type Render = fn(&fathom_report::Report) -> Vec<u8>;

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("renderers write UTF-8")
}

/// Each renderer, for one flow and for four flows both ways, against its snapshot
/// (`{format}_1_flow`, `{format}_4_flows_bidir`).
#[test]
fn every_format_one_flow_and_four_flows_bidir() {
    let formats: [(&str, Render); 3] = [
        ("table", table::render),
        ("csv", csv::render),
        ("json", json::render),
    ];
    for (format, render) in formats {
        for (flows, bidir, name) in [(1, false, "1_flow"), (4, true, "4_flows_bidir")] {
            let snapshot = format!("{format}_{name}");
            insta::assert_snapshot!(snapshot, text(render(&report(flows, bidir))));
        }
    }
}

#[test]
fn json_round_trips() {
    let r = report(4, true);
    let back: fathom_report::Report =
        serde_json::from_slice(&json::render(&r)).expect("valid JSON");
    assert_eq!(back, r);
}
