//! Golden tests: the table, CSV and JSON of the fake run, byte for byte.

mod common;

use common::report;
use fathom_report::{csv, json, table};

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("renderers write UTF-8")
}

#[test]
fn table_one_flow() {
    insta::assert_snapshot!("table_1_flow", text(table::render(&report(1, false))));
}

#[test]
fn table_four_flows_bidir() {
    insta::assert_snapshot!("table_4_flows_bidir", text(table::render(&report(4, true))));
}

#[test]
fn csv_one_flow() {
    insta::assert_snapshot!("csv_1_flow", text(csv::render(&report(1, false))));
}

#[test]
fn csv_four_flows_bidir() {
    insta::assert_snapshot!("csv_4_flows_bidir", text(csv::render(&report(4, true))));
}

#[test]
fn json_one_flow() {
    insta::assert_snapshot!("json_1_flow", text(json::render(&report(1, false))));
}

#[test]
fn json_four_flows_bidir() {
    insta::assert_snapshot!("json_4_flows_bidir", text(json::render(&report(4, true))));
}

#[test]
fn json_round_trips() {
    let r = report(4, true);
    let back: fathom_report::Report =
        serde_json::from_slice(&json::render(&r)).expect("valid JSON");
    assert_eq!(back, r);
}
