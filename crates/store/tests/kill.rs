//! A writer SIGKILLed while saving leaves a consistent store: every run whole, or absent.

mod common;

use fathom_store::Store;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Set (to the database path) in the child writer's environment.
const CHILD: &str = "FATHOM_STORE_TEST_WRITER";
/// Runs the parent waits to see saved before it kills the writer.
const BEFORE_KILL: u32 = 5;

/// The writer, run as a child by [`a_writer_killed_mid_save_leaves_whole_runs`]: saves large
/// runs (many intervals, so most of its time is spent inside a transaction) until killed.
#[test]
fn child_writer() {
    let Some(path) = std::env::var_os(CHILD) else {
        return;
    };
    let mut store = Store::open(path).unwrap();
    let mut report = common::report(4);
    let one = report.intervals.clone();
    while report.intervals.len() < 2000 {
        report.intervals.extend(one.iter().cloned());
    }
    for n in 1.. {
        common::save(&mut store, &report);
        println!("saved {n}");
    }
}

#[test]
fn a_writer_killed_mid_save_leaves_whole_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fathom.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_writer", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let seen = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line == format!("saved {BEFORE_KILL}"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(seen, "the writer stopped before saving {BEFORE_KILL} runs");

    let store = Store::open(&path).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let rows = store.list_runs(usize::MAX).unwrap();
    assert!(rows.len() >= BEFORE_KILL as usize, "{} runs", rows.len());
    for row in rows {
        let run = store.load_run(row.id).unwrap();
        let count = |table: &str| -> usize {
            let sql = format!("SELECT count(*) FROM {table} WHERE run_id = ?1");
            db.query_row(&sql, [row.id], |r| r.get::<_, i64>(0))
                .unwrap() as usize
        };
        assert_eq!(count("intervals"), run.report.intervals.len());
        assert_eq!(count("flows"), run.report.flows.len());
    }
}
