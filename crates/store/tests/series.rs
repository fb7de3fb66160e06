//! Series: created, found again by fingerprint while incomplete, updated point by point, and
//! their runs listed for resuming.

mod common;

use common::{args, env, report, temp_store};
use fathom_report::series::{Axis, Param, Point, Series};
use fathom_store::{NewRun, SeriesSlot, Store, StoreError};

fn sweep() -> Series {
    Series {
        schema_version: 1,
        document: "series".into(),
        fathom_version: "0.1.0".into(),
        kind: "stream".into(),
        args: args(),
        axes: vec![
            Axis {
                name: "buffer".into(),
                values: vec!["16K".into(), "64K".into()],
            },
            Axis {
                name: "parallel".into(),
                values: vec!["1".into()],
            },
        ],
        iterations: 2,
        min_iterations: 2,
        primary_metric: "bits_per_second".into(),
        started_unix_s: 1_700_000_100.5,
        ..Series::default()
    }
}

fn save_in(store: &mut Store, series_id: i64, point: u32, iteration: u32) -> i64 {
    let (args, env, r) = (args(), env(), report(1));
    store
        .save_run(&NewRun {
            report: &r,
            args: &args,
            command: &[],
            env: &env,
            series: Some(SeriesSlot {
                series_id,
                point,
                iteration,
            }),
        })
        .unwrap()
}

#[test]
fn an_interrupted_sweep_is_found_and_its_done_runs_listed() {
    let (_dir, path, mut store) = temp_store();
    let mut s = sweep();
    let id = store.create_series(&s, "fp-A").unwrap();
    let other = store.create_series(&sweep(), "fp-B").unwrap();
    let r00 = save_in(&mut store, id, 0, 0);
    let r01 = save_in(&mut store, id, 0, 1);
    let r10 = save_in(&mut store, id, 1, 0);
    s.points.push(Point {
        params: vec![
            Param {
                name: "buffer".into(),
                value: "16K".into(),
            },
            Param {
                name: "parallel".into(),
                value: "1".into(),
            },
        ],
        runs: vec![r00, r01],
        values: vec![1.0, 2.0],
        ..Point::default()
    });
    store.update_series(id, &s).unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let (found, doc) = store.find_incomplete_series("fp-A").unwrap().unwrap();
    assert_eq!(found, id);
    assert_eq!(doc.id.as_deref(), Some(format!("s{id}").as_str()));
    assert_eq!(doc.points, s.points);
    assert_eq!(
        store.series_runs(id).unwrap(),
        [(0, 0, r00), (0, 1, r01), (1, 0, r10)]
    );
    assert!(store.series_runs(other).unwrap().is_empty());
    assert!(store.find_incomplete_series("fp-C").unwrap().is_none());
    let run = store.load_run(r01).unwrap();
    assert_eq!(
        run.series,
        Some(SeriesSlot {
            series_id: id,
            point: 0,
            iteration: 1
        })
    );
    assert_eq!(
        store.list_runs(1).unwrap()[0].series,
        Some(SeriesSlot {
            series_id: id,
            point: 1,
            iteration: 0
        })
    );

    s.complete = true;
    store.update_series(id, &s).unwrap();
    assert!(store.find_incomplete_series("fp-A").unwrap().is_none());
    let mut want = s.clone();
    want.id = Some(format!("s{id}"));
    assert_eq!(store.load_series(id).unwrap(), want);

    let rows = store.list_series(10).unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [other, id]);
    let row = &rows[1];
    assert!(row.complete && !rows[0].complete);
    assert_eq!((row.points, row.axes.as_str()), (1, "buffer × parallel"));
    assert_eq!(
        (row.kind.as_str(), row.started_unix_s),
        ("stream", 1_700_000_100.5)
    );
}

#[test]
fn the_newest_incomplete_series_is_the_one_resumed() {
    let (_dir, _path, mut store) = temp_store();
    let old = store.create_series(&sweep(), "fp").unwrap();
    let new = store.create_series(&sweep(), "fp").unwrap();
    assert!(new > old);
    assert_eq!(store.find_incomplete_series("fp").unwrap().unwrap().0, new);
}

#[test]
fn missing_series_are_clear_errors() {
    let (_dir, path, mut store) = temp_store();
    let err = store.load_series(7).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("no series s7 in {}", path.display())
    );
    assert!(matches!(
        store.update_series(7, &sweep()),
        Err(StoreError::NoSeries { id: 7, .. })
    ));
}

#[test]
fn a_run_cannot_point_at_a_missing_series() {
    let (_dir, _path, mut store) = temp_store();
    let (args, env, r) = (args(), env(), report(1));
    let saved = store.save_run(&NewRun {
        report: &r,
        args: &args,
        command: &[],
        env: &env,
        series: Some(SeriesSlot {
            series_id: 99,
            point: 0,
            iteration: 0,
        }),
    });
    assert!(matches!(saved, Err(StoreError::Sql { .. })));
    assert!(store.list_runs(10).unwrap().is_empty());
}
