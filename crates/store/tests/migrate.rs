//! Databases written by older fathoms open and migrate; newer or foreign ones are refused.

mod common;

use fathom_store::{Store, StoreError, MIGRATIONS, SCHEMA_VERSION};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// A version 1 database, `v1.db` in a new temporary directory, holding `report` as a version 1
/// fathom saved it: the directory and the database's path.
fn v1_database(report: &fathom_report::Report) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    let db = Connection::open(&path).unwrap();
    db.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
    db.execute_batch(MIGRATIONS[0]).unwrap();
    db.execute(
        "INSERT INTO runs (id, started_unix_s, kind, server, clients, args, fathom_version, plan,
             summary, report, env, error, primary_value)
         VALUES (1, ?1, ?2, ?3, '', ?4, ?5, ?6, ?7, ?8, ?9, NULL, ?10)",
        rusqlite::params![
            report.test.started_unix_s,
            report.test.kind,
            report.test.agent,
            serde_json::to_string(&common::args()).unwrap(),
            report.fathom_version,
            serde_json::to_string(&report.test).unwrap(),
            serde_json::to_string(&report.summary).unwrap(),
            fathom_report::fake::schema_1_json(report),
            common::env().to_string(),
            report.summary.transfer.bits_per_second,
        ],
    )
    .unwrap();
    db.execute(
        "INSERT INTO intervals (run_id, idx, start_s, end_s, omitted, bytes, retransmits, cwnd)
         VALUES (1, 0, 0.0, 1.0, 1, 1000, 0, 10)",
        [],
    )
    .unwrap();
    db.pragma_update(None, "user_version", 1).unwrap();
    (dir, path)
}

/// An empty database whose schema version says `version`, in a new temporary directory: the
/// directory and the database's path.
fn empty_database(version: i64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", version)
        .unwrap();
    (dir, path)
}

/// Every table's and index's SQL, sorted, as sqlite_master holds it.
fn schema_of(path: &Path) -> Vec<String> {
    let db = Connection::open(path).unwrap();
    let mut stmt = db
        .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn user_version(path: &Path) -> i64 {
    let db = Connection::open(path).unwrap();
    db.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_version_1_database_migrates_and_keeps_its_runs() {
    let report = common::report(2);
    let (dir, old) = v1_database(&report);

    let mut store = Store::open(&old).unwrap();
    assert_eq!(user_version(&old), SCHEMA_VERSION);
    let run = store.load_run(1).unwrap();
    assert_eq!(run.report, report);
    assert_eq!(
        (run.args, run.command, run.env, run.series),
        (common::args(), Vec::new(), common::env(), None),
        "a run saved before the command line was kept has none"
    );
    let listed = store.list_runs(10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].primary_value,
        Some(report.summary.transfer.bits_per_second)
    );

    let series = fathom_report::series::Series {
        kind: "stream".into(),
        ..Default::default()
    };
    let id = store.create_series(&series, "fp").unwrap();
    assert_eq!(store.find_incomplete_series("fp").unwrap().unwrap().0, id);
    drop(store);

    let fresh = dir.path().join("fresh.db");
    Store::open(&fresh).unwrap();
    assert_eq!(schema_of(&old), schema_of(&fresh));
}

#[test]
fn a_request_response_run_saved_at_json_schema_1_keeps_its_figures() {
    let report = common::rr_report(1234.5);
    let (_dir, old) = v1_database(&report);
    let run = Store::open(&old).unwrap().load_run(1).unwrap();
    assert_eq!(run.report, report);
    assert_eq!(
        run.report.summary.rr().map(|rr| rr.transactions_per_second),
        Some(1234.5)
    );
}

#[test]
fn reopening_a_current_database_changes_nothing() {
    let (_dir, path, mut store) = common::temp_store();
    let id = common::save(&mut store, &common::report(1));
    drop(store);
    let before = schema_of(&path);
    let store = Store::open(&path).unwrap();
    assert_eq!(schema_of(&path), before);
    assert_eq!(store.list_runs(10).unwrap()[0].id, id);
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let (_dir, path) = empty_database(99);
    let err = Store::open(&path).err().unwrap();
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }));
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(
        text.contains(&format!(
            "was written by a newer fathom (schema 99); this one knows up to {SCHEMA_VERSION}"
        )),
        "{text}"
    );
    assert_eq!(user_version(&path), 99);
}

#[test]
fn a_negative_schema_version_is_refused() {
    let (_dir, path) = empty_database(-1);
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::BadVersion { found: -1, .. })
    ));
}

#[test]
fn the_command_line_as_typed_is_kept_beside_the_runs_own_arguments() {
    let (_dir, _path, mut store) = common::temp_store();
    let report = common::report(1);
    let args = ["rr", "-t", "1s", "--size=4"].map(String::from);
    let typed = ["sweep", "rr", "--vary", "size=4,64", "-t", "1s"].map(String::from);
    let id = store
        .save_run(&fathom_store::NewRun {
            report: &report,
            args: &args,
            command: &typed,
            env: &common::env(),
            series: None,
        })
        .unwrap();
    let run = store.load_run(id).unwrap();
    assert_eq!((run.args, run.command), (args.to_vec(), typed.to_vec()));
}
