//! Issue 37's lab check: five lab hosts, each on its own WAN link to one switch, run a mesh of
//! rr every second and a 1 s stream every 10 s for two minutes. The store holds a series per
//! pair; no host ever ran two exclusive tests (nor an exclusive and a normal one) at once, by
//! the stored start and end times; one host's link given +20 ms each way and 2% loss raises an
//! alert on every pair through it within 5 of its runs, names that host the likely culprit,
//! and clears once the link is put back; the pairs that do not cross it raise nothing. Root;
//! CI runs it as root (2 CPUs), so the thresholds leave room for a busy machine.

mod common;
mod mesh_common;

use common::{json, root_or_ci, run, stderr};
use fathom_store::{MeshRun, Store};
use mesh_common::{assert_status_valid, overlaps, pairs_of};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The host whose link is degraded.
const BAD: &str = "h3";
/// Its link, as the lab names it.
const LINK: &str = "h3-sw1";
/// How long the mesh runs, and when the link is degraded and put back (from the mesh's start).
const RUN: u64 = 120;
const DEGRADE_AT: u64 = 45;
const RESTORE_AT: u64 = 75;

/// A lab removed when dropped, panics included.
struct Lab(String);

impl Drop for Lab {
    fn drop(&mut self) {
        let out = run(&["lab", "down", "--name", &self.0], 120);
        if !out.status.success() {
            eprintln!("lab down {}: {}", self.0, stderr(&out));
        }
    }
}

fn topology() -> String {
    let mut t = String::from("[[switch]]\nname = \"sw1\"\n");
    for h in 1..=5 {
        t.push_str(&format!("\n[[host]]\nname = \"h{h}\"\n"));
    }
    for h in 1..=5 {
        t.push_str(&format!(
            "\n[[wan]]\nends = [\"h{h}\", \"sw1\"]\nparams = \"delay=5ms,rate=100M\"\n"
        ));
    }
    t
}

fn mesh(lab: &str) -> String {
    format!(
        "[mesh]\nname = \"labmesh\"\npeers = 2\n\n\
         [members]\nhosts = [\"h1\", \"h2\", \"h3\", \"h4\", \"h5\"]\nlab = \"{lab}\"\n\n\
         [[test]]\ncommand = \"rr --size 64 -t 200ms\"\nevery = \"1s\"\nslip = \"800ms\"\nsetup = \"600ms\"\n\n\
         [[test]]\nname = \"stream\"\ncommand = \"stream -t 1s\"\nevery = \"10s\"\nsetup = \"600ms\"\n\n\
         [alert]\nafter = 3\nclear = 3\nmin_baseline = 8\ntolerance = \"60%\"\n"
    )
}

/// `fathom lab wan set` on the degraded link.
fn set_link(lab: &str, params: &str) {
    let out = run(&["lab", "wan", "set", "--name", lab, LINK, params], 30);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The runs of `pair`, oldest first.
fn runs_of<'a>(runs: &'a [MeshRun], test: &str, pair: &(String, String)) -> Vec<&'a MeshRun> {
    runs.iter()
        .filter(|r| r.test == test && r.source == pair.0 && r.target == pair.1)
        .collect()
}

/// What a run with the link degraded then restored gave: the status at its end and while
/// degraded, when the link changed (Unix seconds), and the mesh's stderr.
struct Outcome {
    end: Value,
    during: Value,
    degraded: f64,
    restored: f64,
    log: String,
}

#[test]
fn a_lab_mesh_finds_a_degraded_link_names_its_pairs_and_clears_them() {
    if !root_or_ci() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let name = format!("s28-mesh-{}", std::process::id());
    let topo = dir.path().join("topo.toml");
    std::fs::write(&topo, topology()).unwrap();
    let out = run(&["lab", "up", topo.to_str().unwrap(), "--name", &name], 120);
    let lab = Lab(name);
    assert!(out.status.success(), "lab up: {}", stderr(&out));
    let file = dir.path().join("mesh.toml");
    std::fs::write(&file, mesh(&lab.0)).unwrap();
    let db = dir.path().join("mesh.db");
    let o = degrade_and_restore(&lab, file.to_str().unwrap(), db.to_str().unwrap());
    assert_status_valid(&o.end);
    assert_status_valid(&o.during);
    let store = Store::open(&db).unwrap();
    let runs = store.mesh_runs("labmesh").unwrap();
    assert_eq!(overlaps(&runs), Vec::<String>::new(), "class rules broken");
    let rr = pairs_of(&o.end, "rr");
    assert_eq!(rr.len(), 10, "5 members x 2 ring peers: {:#}", o.end);
    assert_eq!(
        store.list_series(1000).unwrap().len(),
        rr.len() + pairs_of(&o.end, "stream").len(),
        "a series per pair"
    );
    for pair in &rr {
        check_pair(&runs, pair, &o);
    }
    let culprits: Vec<&str> = o.during["culprits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["member"].as_str().unwrap())
        .collect();
    assert_eq!(culprits, [BAD], "{:#}", o.during);
    assert_eq!(o.end["alerts"], 0, "{:#}", o.end);
}

/// Runs the mesh for [`RUN`] s, degrading the link at [`DEGRADE_AT`] and restoring it at
/// [`RESTORE_AT`], with a status read while it is degraded.
fn degrade_and_restore(lab: &Lab, file: &str, db: &str) -> Outcome {
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "mesh",
            "run",
            file,
            "--for",
            &format!("{RUN}s"),
            "--store",
            db,
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let at = |s: u64| {
        let then = started + Duration::from_secs(s);
        std::thread::sleep(then.saturating_duration_since(Instant::now()))
    };
    at(DEGRADE_AT);
    let degraded = unix_now();
    set_link(&lab.0, "delay=25ms loss=2%");
    at(DEGRADE_AT + 25);
    let during = json(&run(&["mesh", "status", file, "--store", db, "--json"], 30));
    at(RESTORE_AT);
    let restored = unix_now();
    set_link(&lab.0, "delay=5ms loss=0%");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(RUN + 30),
        "the mesh ended late"
    );
    Outcome {
        end: json(&out),
        during,
        degraded,
        restored,
        log: stderr(&out),
    }
}

/// A pair through the degraded link alerts within 5 of its runs after the change and clears
/// after the link is put back; any other pair never alerts.
fn check_pair(runs: &[MeshRun], pair: &(String, String), o: &Outcome) {
    let mine = runs_of(runs, "rr", pair);
    let log = &o.log;
    assert!(
        mine.len() >= 12,
        "{pair:?}: {} runs\n{:#}",
        mine.len(),
        o.end
    );
    if pair.0 != BAD && pair.1 != BAD {
        let raised: Vec<_> = mine.iter().filter(|r| r.alert).collect();
        assert!(
            raised.is_empty(),
            "{pair:?} crosses no degraded link: {raised:?}\n{log}"
        );
        return;
    }
    let after: Vec<_> = mine
        .iter()
        .filter(|r| r.started_unix_s >= o.degraded)
        .collect();
    let k = after
        .iter()
        .position(|r| r.change.as_deref() == Some("raised"));
    let k = k.unwrap_or_else(|| panic!("{pair:?}: no alert raised\n{log}"));
    assert!(
        k < 5,
        "{pair:?}: raised at its run {} after the change\n{log}",
        k + 1
    );
    let cleared = mine
        .iter()
        .any(|r| r.started_unix_s >= o.restored && r.change.as_deref() == Some("cleared"));
    assert!(
        cleared,
        "{pair:?}: not cleared after the link was put back\n{log}"
    );
    assert!(
        !mine.last().unwrap().alert,
        "{pair:?} still alerting at the end"
    );
}

/// Now, Unix seconds (the store's clock).
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}
