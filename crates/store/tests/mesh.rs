//! Meshes in the store: a series per pair found again by its fingerprint, each test's run and
//! judgement saved together, the pairs' latest state with counts, and members down.

mod common;

use fathom_report::series::Series;
use fathom_store::{MeshMember, MeshRun, NewRun};

fn judged(source: &str, target: &str, at: f64, value: Option<f64>, alert: bool) -> MeshRun {
    MeshRun {
        mesh: "lab".into(),
        test: "rr".into(),
        source: source.into(),
        target: target.into(),
        class: "normal".into(),
        started_unix_s: at,
        ended_unix_s: at + 0.3,
        figure: "latency_p50_us".into(),
        value,
        baseline: Some(100.0),
        band_low: Some(90.0),
        band_high: Some(110.0),
        alert,
        change: None,
        error: value.is_none().then(|| "timed out".into()),
    }
}

#[test]
fn each_pair_is_a_series_of_runs_and_its_latest_state_is_listed() {
    let (_dir, _path, mut store) = common::temp_store();
    let series = Series {
        kind: "rr".into(),
        ..Series::default()
    };
    let report = common::rr_report(5000.0);
    let args = ["rr", "--server", "h2", "--clients", "h1"].map(String::from);
    let command = ["mesh", "run", "lab.toml"].map(String::from);
    let env = serde_json::json!({});
    let run = NewRun {
        report: &report,
        args: &args,
        command: &command,
        env: &env,
        series: None,
    };
    let a = store
        .mesh_series(&judged("h1", "h2", 0.0, None, false), &series)
        .unwrap();
    assert_eq!(
        a,
        store
            .mesh_series(&judged("h1", "h2", 0.0, None, false), &series)
            .unwrap()
    );
    let b = store
        .mesh_series(&judged("h2", "h1", 0.0, None, false), &series)
        .unwrap();
    assert_ne!(a, b);
    store
        .save_mesh_run(a, Some(&run), &judged("h1", "h2", 1.0, Some(100.0), false))
        .unwrap();
    store
        .save_mesh_run(a, None, &judged("h1", "h2", 2.0, None, false))
        .unwrap();
    let mut raised = judged("h1", "h2", 3.0, Some(300.0), true);
    raised.change = Some("raised".into());
    store.save_mesh_run(a, Some(&run), &raised).unwrap();
    store
        .save_mesh_run(a, Some(&run), &judged("h1", "h2", 4.0, Some(310.0), true))
        .unwrap();
    store
        .save_mesh_run(b, Some(&run), &judged("h2", "h1", 1.5, Some(99.0), false))
        .unwrap();

    assert_eq!(
        store.series_runs(a).unwrap(),
        [(0, 0, 1), (0, 1, 2), (0, 2, 3)]
    );
    let pairs = store.mesh_pairs("lab").unwrap();
    assert_eq!(pairs.len(), 2);
    let p = &pairs[0];
    assert_eq!((p.last.source.as_str(), p.runs, p.failed), ("h1", 4, 1));
    assert_eq!(
        (p.last.value, p.last.alert, p.alert_since_unix_s),
        (Some(310.0), true, Some(3.0))
    );
    assert_eq!(pairs[1].alert_since_unix_s, None);
    assert_eq!(
        store.mesh_history("lab", "rr", "h1", "h2", 3).unwrap(),
        [None, Some(300.0), Some(310.0)]
    );
    assert_eq!(store.mesh_runs("lab").unwrap().len(), 5);
    let since = store.mesh_runs_since("lab", Some(2.0)).unwrap();
    let at: Vec<f64> = since.iter().map(|r| r.started_unix_s).collect();
    assert_eq!(at, [2.0, 3.0, 4.0], "from 2 s on, oldest first");
    assert_eq!(store.mesh_runs_since("lab", None).unwrap().len(), 5);
    assert_eq!(store.mesh_names().unwrap(), ["lab"]);
    assert!(store.mesh_pairs("other").unwrap().is_empty());
    let stored = store.load_run(1).unwrap();
    assert_eq!(stored.args, args);
    assert_eq!(stored.command, command);
}

#[test]
fn members_down_and_up_are_kept() {
    let (_dir, _path, mut store) = common::temp_store();
    let mut m = MeshMember {
        name: "h3".into(),
        down: true,
        since_unix_s: Some(10.0),
        reason: Some("connection refused".into()),
    };
    store.set_mesh_member("lab", &m).unwrap();
    assert_eq!(store.mesh_members("lab").unwrap(), [m.clone()]);
    m.down = false;
    store.set_mesh_member("lab", &m).unwrap();
    assert!(!store.mesh_members("lab").unwrap()[0].down);
    assert!(store.mesh_members("other").unwrap().is_empty());
}
