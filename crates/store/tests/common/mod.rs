//! Helpers shared by the store's tests: synthetic reports and a throwaway store.

// Each test file uses only some of these helpers.
#![allow(dead_code)]

use fathom_report::Report;
use fathom_store::{NewRun, Store};
use std::path::PathBuf;

/// The fake path's deterministic stream report, `flows` flows forward.
pub fn report(flows: u32) -> Report {
    fathom_report::build(&fathom_report::fake::run_data(flows, false))
}

/// A request/response report: the fake stream report relabelled, with a transaction rate.
pub fn rr_report(tps: f64) -> Report {
    let mut r = report(1);
    r.test.kind = "rr".into();
    r.summary.section = Some(fathom_report::model::KindSummary::Rr(
        fathom_report::model::RrSummary {
            transactions_per_second: tps,
            ..Default::default()
        },
    ));
    r
}

/// A fresh store in its own temporary directory (kept alive by the returned guard).
pub fn temp_store() -> (tempfile::TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/fathom.db");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

/// The arguments every test run claims to have been typed with.
pub fn args() -> Vec<String> {
    ["fathom", "stream", "-P", "2"].map(String::from).to_vec()
}

/// An environment description like the CLI's.
pub fn env() -> serde_json::Value {
    serde_json::json!({
        "kernel": "6.1.0-fake",
        "cpu_model": "Fake CPU @ 1 GHz",
        "fathom_version": "0.1.0",
        "sysctls": {"net.core.rmem_max": 212992, "net.ipv4.tcp_congestion_control": "cubic"},
    })
}

/// Saves `report` with [`args`] and [`env`], outside any series.
pub fn save(store: &mut Store, report: &Report) -> i64 {
    let (args, env) = (args(), env());
    store
        .save_run(&NewRun {
            report,
            args: &args,
            command: &[],
            env: &env,
            series: None,
        })
        .unwrap()
}
