//! `fathom iperf3 ARGS…` against a stock `iperf3 -s` (Debian's 3.12): its `-J` document is read
//! by a real consumer (the PyPI package `iperf3`'s `TestResult`, installed by
//! scripts/install-test-deps.sh) with the figures fathom measured, and holds every key that
//! iperf3's own `-J` of the same test holds. Bad flags are usage errors (exit 2); `-s` answers
//! a stock iperf3 client.

mod iperf3_common;
use iperf3_common::{free_port, start, Kill};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// A stock `iperf3 -s` on a free loopback port; returns it and the port.
fn iperf3_server() -> (Kill, String) {
    let port = free_port();
    let mut cmd = Command::new("iperf3");
    cmd.args(["-s", "-B", "127.0.0.1", "-p", &port, "--forceflush"]);
    (start(cmd, false, "Server listening").0, port)
}

/// Runs `PROGRAM ARGS` under a 60 s timeout.
fn run(program: &str, args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(program)
        .args(args)
        .output()
        .unwrap()
}

/// `fathom iperf3 ARGS`.
fn fathom(args: &[&str]) -> Output {
    let mut all = vec!["iperf3"];
    all.extend_from_slice(args);
    run(env!("CARGO_BIN_EXE_fathom"), &all)
}

/// The document a successful `-J` run printed.
fn document(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// What the PyPI package `iperf3`'s `TestResult` reads from a document, as JSON.
fn consumer_reads(doc: &[u8]) -> Value {
    const SCRIPT: &str = r#"
import json, sys
from iperf3 import TestResult
r = TestResult(sys.stdin.read())
keys = ["error", "protocol", "num_streams", "blksize", "duration", "local_port", "remote_port",
        "local_cpu_total", "remote_cpu_total", "sent_bytes", "received_bytes", "sent_bps",
        "received_Mbps", "retransmits", "bytes", "packets", "lost_packets", "jitter_ms",
        "timesecs", "type"]
print(json.dumps({k: getattr(r, k, None) for k in keys}))
"#;
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(doc).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the iperf3 package (scripts/install-test-deps.sh installs it) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn iperf3s_python_consumer_reads_fathoms_figures() {
    let (_srv, port) = iperf3_server();
    let out = fathom(&["-c", "127.0.0.1", "-p", &port, "-n", "10M", "-P", "2", "-J"]);
    let doc = document(&out);
    let r = consumer_reads(&out.stdout);
    assert_eq!(r["error"], Value::Null);
    assert_eq!(
        (r["protocol"].as_str(), r["num_streams"].as_u64()),
        (Some("TCP"), Some(2))
    );
    assert_eq!(r["sent_bytes"], 10_485_760);
    assert_eq!(r["received_bytes"], 10_485_760);
    assert_eq!(r["remote_port"], port.parse::<u64>().unwrap());
    assert_eq!(r["type"], "client");
    assert_eq!(
        r["local_cpu_total"],
        doc["extensions"]["fathom"]["near"]["cpu_percent"]["total"]
    );
    assert_eq!(
        r["remote_cpu_total"],
        doc["extensions"]["fathom"]["far_results"]["cpu_util_total"]
    );

    let out = fathom(&[
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-u",
        "-b",
        "5M",
        "-l",
        "1400",
        "-n",
        "1400000",
        "-J",
    ]);
    document(&out);
    let r = consumer_reads(&out.stdout);
    assert_eq!(r["protocol"], "UDP");
    assert_eq!(r["bytes"], 1_400_000);
    // Loopback at a modest rate loses nothing: the server saw all 1000 datagrams.
    assert_eq!(
        (r["packets"].as_u64(), r["lost_packets"].as_u64()),
        (Some(1000), Some(0))
    );
    assert!(r["jitter_ms"].as_f64().is_some());
}

/// Every member path of `v`, arrays' items under `[]`.
fn key_paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| key_paths(x, &format!("{at}[]"), out)),
        _ => {}
    }
}

#[test]
fn minus_j_has_every_key_iperf3s_own_has() {
    let (_srv, port) = iperf3_server();
    for test in [
        &["-t", "2"][..],
        &["-u", "-b", "10M", "-t", "2"],
        &["-R", "-t", "2"],
    ] {
        let mut args = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
        args.extend_from_slice(test);
        let theirs = run("iperf3", &args);
        let ours = fathom(&args);
        let (mut want, mut have) = (BTreeSet::new(), BTreeSet::new());
        key_paths(&document(&theirs), "", &mut want);
        key_paths(&document(&ours), "", &mut have);
        let missing: Vec<_> = want.difference(&have).collect();
        assert!(
            missing.is_empty(),
            "{test:?}: fathom's -J lacks {missing:#?}"
        );
    }
}

#[test]
fn json_stream_is_a_line_per_event() {
    let (_srv, port) = iperf3_server();
    let out = fathom(&["-c", "127.0.0.1", "-p", &port, "-t", "2", "--json-stream"]);
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    let names: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(names.first(), Some(&"start"), "{names:?}");
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    assert!(names[1..names.len() - 1].iter().all(|n| *n == "interval") && names.len() >= 4);
    assert_eq!(events[0]["data"]["connected"].as_array().unwrap().len(), 1);
    let intervals: u64 = events[1..events.len() - 1]
        .iter()
        .map(|e| e["data"]["sum"]["bytes"].as_u64().unwrap())
        .sum();
    // What the writes still in flight at TEST_END sent is in the end's sum, in no interval.
    let sent = events.last().unwrap()["data"]["sum_sent"]["bytes"]
        .as_u64()
        .unwrap();
    assert!(intervals > 0 && intervals <= sent, "{intervals} of {sent}");
}

#[test]
fn bad_flags_are_usage_errors() {
    for (args, needle) in [
        (&["-c", "127.0.0.1", "--frobnicate"][..], "--frobnicate"),
        (&["-c", "127.0.0.1", "-Z"], "-Z"),
        (&["-c", "127.0.0.1", "-P", "129"], "129"),
        (&["-c", "127.0.0.1", "-A", "0,1"], "-A"),
        (&["-c", "127.0.0.1", "-u", "-l", "8"], "-l"),
        (&["-P", "2"], "client (-c HOST) or a server (-s)"),
        (&["-s", "-P", "2", "-J"], "-P, -J"),
        (&["-s", "--json-stream"], "--json-stream"),
        (&["-s", "-B", "10.0.0.1"], "--iperf3-open"),
    ] {
        let out = fathom(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_failed_test_prints_iperf3s_error_document() {
    let port = free_port();
    let out = fathom(&["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["error"].as_str().unwrap().contains("cannot connect"),
        "{doc}"
    );
}

#[test]
fn minus_s_answers_a_stock_client_and_logfile_keeps_the_output() {
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fathom"));
    cmd.args(["iperf3", "-s", "-p", &port]);
    let _server = start(cmd, true, "iperf3 clients on");
    let out = run(
        "iperf3",
        &["-c", "127.0.0.1", "-p", &port, "-n", "1M", "-J"],
    );
    let d = document(&out);
    assert_eq!(d["end"]["sum_received"]["bytes"], 1_048_576);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.json");
    let log_arg = log.to_str().unwrap();
    let out = fathom(&[
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "1M",
        "-J",
        "--logfile",
        log_arg,
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let d: Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
    assert_eq!(d["end"]["sum_sent"]["bytes"], 1_048_576);
}
