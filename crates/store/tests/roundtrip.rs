//! Runs survive a save and a fresh open exactly, listings come newest first, and the queryable
//! rows match the report.

mod common;

use common::{args, env, report, rr_report, save, temp_store};
use fathom_store::{Store, StoreError};

#[test]
fn a_run_reloads_equal_from_a_fresh_open() {
    let (_dir, path, mut store) = temp_store();
    let original = report(2);
    assert!(!original.intervals.is_empty() && original.flows.len() == 2);
    let id = save(&mut store, &original);
    drop(store);

    let store = Store::open(&path).unwrap();
    let run = store.load_run(id).unwrap();
    assert_eq!(run.id, id);
    assert_eq!(run.report, original);
    assert_eq!(run.args, args());
    assert_eq!(run.env, env());
    assert_eq!(run.started_unix_s, original.test.started_unix_s);
    assert_eq!(run.series, None);
}

#[test]
fn listing_is_newest_first_with_the_primary_figure() {
    let (_dir, _path, mut store) = temp_store();
    let stream = report(1);
    let a = save(&mut store, &stream);
    let mut failed = report(1);
    failed.error = Some("agent vanished".into());
    failed.test.embedded_agent = true;
    let b = save(&mut store, &failed);
    let c = save(&mut store, &rr_report(12_345.0));

    let rows = store.list_runs(10).unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [c, b, a]);
    assert_eq!(rows[0].kind, "rr");
    assert_eq!(rows[0].primary_metric, "transactions_per_second");
    assert_eq!(rows[0].primary_value, Some(12_345.0));
    assert_eq!(rows[1].error.as_deref(), Some("agent vanished"));
    assert_eq!(rows[1].server, "embedded");
    assert_eq!(rows[2].primary_metric, "bits_per_second");
    assert_eq!(
        rows[2].primary_value,
        Some(stream.summary.transfer.bits_per_second)
    );
    assert_eq!(rows[2].server, stream.test.agent);
    assert_eq!(store.list_runs(2).unwrap().len(), 2);
}

#[test]
fn intervals_and_flows_are_queryable_rows() {
    let (_dir, path, mut store) = temp_store();
    let r = report(3);
    let id = save(&mut store, &r);
    let db = rusqlite::Connection::open(&path).unwrap();
    let bps: Vec<f64> = db
        .prepare("SELECT bits_per_second FROM intervals WHERE run_id = ?1 ORDER BY idx")
        .unwrap()
        .query_map([id], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want: Vec<f64> = r.intervals.iter().map(|i| i.bits_per_second).collect();
    assert_eq!(bps, want);
    let (flows, bytes): (i64, i64) = db
        .query_row(
            "SELECT count(*), sum(bytes) FROM flows WHERE run_id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(flows, 3);
    assert_eq!(
        bytes as u64,
        r.flows.iter().map(|f| f.transfer.bytes).sum::<u64>()
    );
    let mode: String = db
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_missing_run_is_a_clear_error() {
    let (_dir, path, store) = temp_store();
    let err = store.load_run(42).unwrap_err();
    assert!(matches!(err, StoreError::NoRun { id: 42, .. }));
    assert_eq!(err.to_string(), format!("no run 42 in {}", path.display()));
}

#[test]
fn a_file_that_is_not_a_database_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "these are not the bytes you are looking for ".repeat(100),
    )
    .unwrap();
    let err = Store::open(&path).err().unwrap();
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}
