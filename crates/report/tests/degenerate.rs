//! Runs that went wrong still give a report with numbers everywhere (never NaN, Infinity or
//! null where the schema wants a number) that every renderer prints without panicking.

mod common;

use fathom_proto::sample::Mark;
use fathom_report::{build, csv, fake, json, table, RunData};

/// Every renderer runs; the JSON validates and holds no non-finite number.
fn check(run: &RunData) -> fathom_report::Report {
    let r = build(run);
    common::assert_valid(&common::parse(&json::render(&r)));
    let text = String::from_utf8(table::render(&r)).unwrap();
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    let rows = String::from_utf8(csv::render(&r)).unwrap();
    assert!(!rows.contains("NaN") && !rows.contains("inf"), "{rows}");
    r
}

#[test]
fn no_snapshots_from_one_end() {
    let mut run = fake::run_data(2, true);
    run.ends[0].snaps.clear();
    let r = check(&run);
    assert!(r.error.is_some());
    let text = String::from_utf8(table::render(&r)).unwrap();
    assert!(text.lines().any(|l| l.starts_with("error: ")), "{text}");
}

#[test]
fn no_snapshots_at_all() {
    let mut run = fake::run_data(1, false);
    run.ends[1] = Default::default();
    run.ends[0] = Default::default();
    assert!(check(&run).error.is_some());
}

#[test]
fn zero_length_windows() {
    let mut run = fake::run_data(3, true);
    for end in run.ends.iter_mut() {
        for s in &mut end.snaps {
            s.t_ns = 1_000_000_000;
            s.cpu = Default::default();
        }
    }
    let r = check(&run);
    assert_eq!(r.summary.seconds, 0.0);
    assert_eq!(r.summary.transfer.bits_per_second, 0.0);
}

#[test]
fn window_never_ended() {
    let mut run = fake::run_data(1, false);
    for end in run.ends.iter_mut() {
        end.snaps
            .retain(|s| !matches!(s.mark, Mark::WindowEnd | Mark::Final));
    }
    run.error = Some("agent vanished".into());
    let r = check(&run);
    assert_eq!(r.error.as_deref(), Some("agent vanished"));
}

#[test]
fn flows_missing_from_snapshots_and_infos() {
    let mut run = fake::run_data(2, false);
    for end in run.ends.iter_mut() {
        end.info = Default::default();
        for s in &mut end.snaps {
            s.flows.clear();
        }
    }
    check(&run);
}
