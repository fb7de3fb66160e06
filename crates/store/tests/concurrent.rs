//! Several writers share one store: each waits for the other's transactions.

mod common;

use fathom_store::Store;
use std::sync::{Arc, Barrier};

#[test]
fn two_handles_on_two_threads_both_save_everything() {
    const EACH: usize = 25;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.db");
    let start = Arc::new(Barrier::new(2));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let (path, start) = (path.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut store = Store::open(&path).unwrap();
                let report = common::report(2);
                (0..EACH)
                    .map(|_| common::save(&mut store, &report))
                    .collect::<Vec<i64>>()
            })
        })
        .collect();
    let mut ids: Vec<i64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 2 * EACH);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list_runs(1000).unwrap().len(), 2 * EACH);
}
