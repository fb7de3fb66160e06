//! `fathom stream --iperf3` against a stock `iperf3 -s` (Debian's 3.12): both ends' byte counts
//! match exactly with `-n`, reverse and parallel streams work, and a busy server is a clear
//! error with exit 1. `fathom udp --iperf3` likewise: both ends count the same datagrams.
//! Also against fathom's own `serve --iperf3`, each side checking the other.

mod common;
mod iperf3_common;
use iperf3_common::{assert_host_cpu, assert_peer_cpu, free_port, start, Kill};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A stock `iperf3 -s` on a free loopback port.
fn iperf3_server() -> (Kill, String) {
    let port = free_port();
    let mut cmd = Command::new("iperf3");
    cmd.args(["-s", "-B", "127.0.0.1", "-p", &port, "--forceflush"]);
    let (k, _) = start(cmd, false, "Server listening");
    (k, format!("127.0.0.1:{port}"))
}

/// Runs `fathom stream --iperf3 TARGET ARGS --json`: (exit code, document or stderr).
fn fathom(target: &str, args: &[&str]) -> (i32, Value, String) {
    fathom_kind("stream", target, args)
}

/// [`fathom`], asserting that it succeeded: its document.
fn fathom_ok(target: &str, args: &[&str]) -> Value {
    let (code, d, err) = fathom(target, args);
    assert_eq!(code, 0, "{err}");
    d
}

/// Runs `fathom KIND --iperf3 TARGET ARGS --json`: (exit code, document or stderr).
fn fathom_kind(kind: &str, target: &str, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new("timeout")
        .args([
            "60",
            env!("CARGO_BIN_EXE_fathom"),
            kind,
            "--iperf3",
            target,
            "--json",
        ])
        .args(args)
        // Only the test that reads the store back keeps its run (in a store of its own).
        .args(if args.contains(&"--store") {
            &[][..]
        } else {
            &["--no-store"][..]
        })
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), doc, err)
}

fn far_bytes(d: &Value) -> u64 {
    far_sum(d, "bytes")
}

/// The sum of `key` over the server's streams, as its results say.
fn far_sum(d: &Value, key: &str) -> u64 {
    d["far"]["streams"]
        .as_array()
        .expect("far streams")
        .iter()
        .map(|s| s[key].as_u64().unwrap())
        .sum()
}

/// The sum of `key` over this end's streams.
fn near_sum(d: &Value, key: &str) -> u64 {
    d["near"]["streams"]
        .as_array()
        .expect("near streams")
        .iter()
        .map(|s| s[key].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn byte_counts_match_exactly_against_iperf3_s() {
    let (_srv, target) = iperf3_server();
    let d = fathom_ok(&target, &["-n", "10M"]);
    assert_eq!(d["near"]["sent_bytes"], 10_485_760);
    assert_eq!(far_bytes(&d), 10_485_760);
    let d = fathom_ok(&target, &["-n", "10M", "-R", "-P", "3"]);
    assert_eq!(d["near"]["received_bytes"], 10_485_760);
    assert_eq!(far_bytes(&d), 10_485_760);
    assert_eq!(d["near"]["streams"].as_array().unwrap().len(), 3);
}

#[test]
fn the_run_is_stored_as_a_fathom_stream_run_of_this_end() {
    let (_srv, target) = iperf3_server();
    let name = format!("fathom-iperf3-stored-{}.db", std::process::id());
    let own = std::env::temp_dir().join(name).display().to_string();
    let d = fathom_ok(&target, &["-n", "10M", "-P", "2", "--store", &own]);
    let out = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(["runs", "--store", &own, "--json"])
        .output()
        .unwrap();
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &runs["runs"][0];
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(1), "{runs}");
    assert_eq!(run["kind"], "stream", "{runs}");
    let id = run["id"].to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(["show", &id, "--store", &own, "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(doc["schema_version"], 2, "{doc}");
    assert_eq!(doc["test"]["kind"], "stream", "{doc}");
    assert_eq!(doc["test"]["parallel"], 2, "{doc}");
    assert_eq!(doc["summary"]["bytes"], 10_485_760, "{doc}");
    assert_eq!(doc["summary"]["sender_bytes"], 10_485_760, "{doc}");
    assert_eq!(doc["hosts"][0]["role"], "client", "{doc}");
    assert_eq!(doc["flows"].as_array().unwrap().len(), 2, "{doc}");
    common::assert_valid(&doc, "a stored iperf3 client run");
    assert_host_cpu(&doc, "local");
    assert_peer_cpu(&doc["summary"]["cpu"]["remote"]["iperf3"], |k| {
        d["far"][format!("cpu_util_{k}")].as_f64()
    });
    let _ = std::fs::remove_file(&own);
}

#[test]
fn four_timed_streams_report_both_ends() {
    let (_srv, target) = iperf3_server();
    let d = fathom_ok(&target, &["-t", "1s", "-P", "4"]);
    let near = d["near"]["streams"].as_array().unwrap();
    assert_eq!(near.len(), 4);
    assert!(near
        .iter()
        .all(|s| s["tcp_info"]["rtt_us"].as_u64().is_some()));
    let sent = d["near"]["sent_bytes"].as_u64().unwrap();
    assert!(far_bytes(&d) > 0 && far_bytes(&d) <= sent);
    assert!(d["far"]["cpu_util_total"].as_f64().is_some());
}

#[test]
fn udp_datagrams_are_counted_alike_at_both_ends() {
    let (_srv, target) = iperf3_server();
    let args = ["--rate", "5M", "-l", "1400", "-n", "1000", "-P", "2"];
    let (code, d, err) = fathom_kind("udp", &target, &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(d["protocol"], "udp");
    assert_eq!(d["near"]["sent_bytes"], 1_400_000);
    assert_eq!(near_sum(&d, "packets"), 1000);
    // Loopback at a modest rate loses nothing: the server saw every datagram in sequence.
    assert_eq!(far_sum(&d, "packets"), 1000, "{d:#}");
    assert_eq!(far_sum(&d, "errors"), 0);
    assert_eq!(far_bytes(&d), 1_400_000);
}

#[test]
fn udp_reverse_counts_what_the_server_sent() {
    let (_srv, target) = iperf3_server();
    let args = ["-R", "--rate", "4M", "-l", "1200", "-t", "1s"];
    let (code, d, err) = fathom_kind("udp", &target, &args);
    assert_eq!(code, 0, "{err}");
    let sent = far_sum(&d, "packets");
    assert!(sent > 0, "{d:#}");
    // The server's own count of what it sent is what this end saw, none lost.
    assert_eq!(near_sum(&d, "packets"), sent, "{d:#}");
    assert_eq!(near_sum(&d, "lost_packets"), 0);
    assert_eq!(d["near"]["received_bytes"], sent * 1200);
    assert!(d["near"]["streams"][0]["jitter_ms"].as_f64().is_some());
}

#[test]
fn a_busy_server_is_a_clear_error() {
    let (_srv, target) = iperf3_server();
    let port = target.rsplit(':').next().unwrap();
    let _first = Kill(
        Command::new("timeout")
            .args(["30", "iperf3", "-c", "127.0.0.1", "-p", port, "-t", "4"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(1500));
    let (code, _, err) = fathom(&target, &["-t", "1s"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the server is busy running a test"), "{err}");
    let (code, _, err) = fathom_kind("udp", &target, &["-t", "1s"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the server is busy running a test"), "{err}");
}

#[test]
fn a_paced_tcp_stream_stays_near_its_rate() {
    let (_srv, target) = iperf3_server();
    // 100 Mbit/s for 1 s is 12.5 MB; unpaced, loopback moves hundreds of MB in that time.
    let d = fathom_ok(&target, &["--rate", "100M", "-t", "1s"]);
    let sent = d["near"]["sent_bytes"].as_u64().unwrap();
    assert!(sent > 0 && sent < 4 * 12_500_000, "{sent} bytes");
    assert!(far_bytes(&d) <= sent);
}

#[test]
fn fathom_drives_fathoms_own_iperf3_server() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fathom"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--iperf3=0"]);
    let (_agent, line) = start(cmd, true, "iperf3 clients on");
    let target = line
        .split_whitespace()
        .find(|w| w.parse::<std::net::SocketAddr>().is_ok())
        .expect("address")
        .to_string();
    let d = fathom_ok(&target, &["-n", "10M", "--bidir"]);
    assert_eq!(d["near"]["sent_bytes"], 10_485_760);
    assert_eq!(d["near"]["received_bytes"], 10_485_760);
    assert_eq!(far_bytes(&d), 2 * 10_485_760);
}
