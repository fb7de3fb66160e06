//! One contract for every test command's `--json`: every kind of the registry
//! (`fathom_proto::kind::KINDS`, so a kind added without a case here fails), TLS, and iperf3
//! both ways (fathom's client against a stock `iperf3 -s`, and stock `iperf3 -c` against
//! fathom's `serve --iperf3 --store`) run briefly on loopback; what each prints validates
//! against docs/schema/result.schema.json, each run is stored, and `fathom show ID --json` of
//! every stored run validates too and prints the report as it was printed.

mod common;
mod iperf3_common;

use common::{assert_valid, json, run, stderr};
use fathom_proto::kind::{Descriptor, KINDS};
use iperf3_common::{free_port, start, Server};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many cases run at once (CI has 2 cores).
const WORKERS: usize = 3;

/// One command to run with `--json`: a name, its arguments, and the kinds its stored runs have.
struct Case {
    name: String,
    args: Vec<String>,
    kinds: Vec<&'static str>,
}

/// The arguments after the kind's command and flags that run `d` briefly on loopback; `None`
/// for a kind this test has no case for.
fn kind_args(d: &Descriptor, dir: &Path) -> Option<Vec<String>> {
    let root = dir.display().to_string();
    let rrul = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/rrul.toml");
    let args: Vec<&str> = match d.name {
        "stream" | "rr" | "crr" | "udp_rr" | "udp" => vec!["-t", "0.3s"],
        "file" => vec!["put", "--size", "1M", ":copy", "--files-root", &root],
        "profile" => vec![rrul, "--set", "idle=0.3s", "--set", "duration=0.3s"],
        _ => return None,
    };
    Some(args.into_iter().map(String::from).collect())
}

/// A case per kind of the registry, and TLS.
fn kind_cases(dir: &Path) -> Vec<Case> {
    let mut cases: Vec<Case> = KINDS
        .iter()
        .map(|d| {
            let extra = kind_args(d, dir).unwrap_or_else(|| {
                panic!(
                    "kind {} has no case in tests/json_every_kind.rs: add its arguments",
                    d.name
                )
            });
            let mut args = vec![d.command.to_string()];
            args.extend(d.flags.iter().map(|f| f.to_string()));
            args.extend(extra);
            Case {
                name: d.name.into(),
                args,
                kinds: vec![d.name],
            }
        })
        .collect();
    cases.push(Case {
        name: "tls".into(),
        args: ["stream", "--tls", "-t", "0.3s"].map(String::from).to_vec(),
        kinds: vec!["stream"],
    });
    cases
}

/// The reports a document holds: itself, or a profile's groups' reports.
fn reports(doc: &Value) -> Vec<Value> {
    match doc.get("groups").and_then(Value::as_array) {
        Some(groups) => groups.iter().map(|g| g["report"].clone()).collect(),
        None => vec![doc.clone()],
    }
}

/// Runs `case` with `--json` on the store `db`: its document validates, and so does every
/// run it stored, read back with `show --json`, which prints one of the reports it printed.
/// The kinds of the stored runs.
fn check(case: &Case, db: &str) -> Vec<String> {
    let mut args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    args.extend(["--json", "--store", db]);
    let out = run(&args, 120);
    assert!(out.status.success(), "{}: {}", case.name, stderr(&out));
    let doc = json(&out);
    assert_valid(&doc, &format!("{} --json", case.name));
    let printed = reports(&doc);
    let kinds = stored(db, &case.name, printed.len(), Some(&printed));
    for k in &kinds {
        assert!(
            case.kinds.contains(&k.as_str()),
            "{}: stored {k}",
            case.name
        );
    }
    kinds
}

/// Reads the `n` runs of the store `db` back with `show --json` (waiting up to 10 s for them),
/// validates each, and when `printed` is given asserts that each is one of those reports; the
/// runs' kinds.
fn stored(db: &str, what: &str, n: usize, printed: Option<&[Value]>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let runs = loop {
        let out = run(&["runs", "--json", "-n", "100", "--store", db], 10);
        let listed = out.status.success().then(|| json(&out)["runs"].clone());
        match listed.as_ref().and_then(Value::as_array) {
            Some(runs) if runs.len() >= n => break runs.clone(),
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            _ => panic!("{what}: {n} runs were not stored in {db}: {listed:?}"),
        }
    };
    assert_eq!(runs.len(), n, "{what}: {runs:?}");
    runs.iter()
        .map(|r| {
            let id = r["id"].to_string();
            let out = run(&["show", &id, "--json", "--store", db], 10);
            assert!(out.status.success(), "{what}: show {id}: {}", stderr(&out));
            let shown = json(&out);
            assert_valid(&shown, &format!("{what}: show {id} --json"));
            if let Some(printed) = printed {
                assert!(
                    printed.contains(&shown),
                    "{what}: show {id} differs from --json"
                );
            }
            r["kind"].as_str().expect("a kind").to_string()
        })
        .collect()
}

/// Runs `cases` on `WORKERS` threads, each case with a store of its own in `dir`; every
/// stored run's kind.
fn check_all(cases: &[Case], dir: &Path) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let kinds = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| {
                while let Some(case) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let db = dir.join(format!("{}.db", case.name));
                    let found = check(case, db.to_str().expect("a UTF-8 path"));
                    kinds.lock().unwrap().extend(found);
                }
            });
        }
    });
    kinds.into_inner().unwrap()
}

#[test]
fn every_kinds_json_and_its_stored_run_follow_the_result_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = kind_cases(dir.path());
    let kinds = check_all(&cases, dir.path());
    for d in KINDS {
        assert!(
            kinds.iter().any(|k| k == d.name),
            "no stored run of kind {}: {kinds:?}",
            d.name
        );
    }
}

#[test]
fn iperf3_runs_both_ways_follow_the_result_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let mut cmd = Command::new("iperf3");
    cmd.args(["-s", "-B", "127.0.0.1", "-p", &port, "--forceflush"]);
    let (_stock, _) = start(cmd, false, "Server listening");
    let stock = format!("127.0.0.1:{port}");
    // fathom's own iperf3 server, storing what it answers.
    let served = dir.path().join("served.db");
    let served = served.to_str().expect("a UTF-8 path");
    let agent = Server::start_with(&["--store", served]);
    let own = agent.addr.to_string();
    let word = |s: &str| s.to_string();
    let client = |name: &str, kind: &'static str, target: &str, extra: &[&str]| Case {
        name: name.into(),
        args: [&[kind, "--iperf3", target, "-t", "1s"][..], extra]
            .concat()
            .into_iter()
            .map(word)
            .collect(),
        kinds: vec![kind],
    };
    // The stock server runs one test at a time: its cases go one after the other.
    for case in [
        client("iperf3_stream", "stream", &stock, &["-P", "2"]),
        client("iperf3_stream_reverse", "stream", &stock, &["-R"]),
        client("iperf3_udp", "udp", &stock, &["--rate", "10M"]),
        client(
            "iperf3_udp_reverse",
            "udp",
            &stock,
            &["-R", "--rate", "10M"],
        ),
        client("iperf3_own_server", "stream", &own, &["--bidir"]),
    ] {
        let db = dir.path().join(format!("{}.db", case.name));
        check(&case, db.to_str().expect("a UTF-8 path"));
    }
    for args in [&["-t", "1", "-R"][..], &["-t", "1", "-u", "-b", "10M"]] {
        let (code, out) = agent.client(args);
        assert_eq!(code, 0, "iperf3 -c {args:?}: {out}");
    }
    let mut kinds = stored(served, "serve --iperf3 --store", 3, None);
    kinds.sort();
    assert_eq!(kinds, ["stream", "stream", "udp"], "the agent's runs");
}
