//! `fathom stream --iperf3` against a stock `iperf3 -s` (Debian's 3.12): its `--json` is the
//! schema-2 result document (the server's figures in it where they belong, iperf3's -1 never
//! 2^64-1), both ends' byte counts match exactly with `-n`, reverse and parallel streams work,
//! and a busy server is a clear error with exit 1. `fathom udp --iperf3` likewise: both ends
//! count the same datagrams. Also against fathom's own `serve --iperf3`, each side checking the
//! other.

mod common;
mod iperf3_common;
use iperf3_common::{assert_host_cpu, free_port, start, Kill};
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

/// A count at `pointer` in `d`.
fn n(d: &Value, pointer: &str) -> u64 {
    d.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no count at {pointer}: {d:#}"))
}

/// The sum of `key` over the flows of `d` going `direction` ("forward": this end sent).
fn flows_sum(d: &Value, direction: &str, key: &str) -> u64 {
    let flows = d["flows"].as_array().expect("flows");
    let going = flows.iter().filter(|f| f["direction"] == direction);
    going.map(|f| f[key].as_u64().unwrap()).sum()
}

/// Asserts that `d` is a schema-2 result document holding no number iperf3 meant as unknown.
fn assert_result(d: &Value, what: &str) {
    common::assert_valid(d, what);
    let text = d.to_string();
    assert!(!text.contains("18446744073709551615"), "{what}: {text}");
}

#[test]
fn byte_counts_match_exactly_against_iperf3_s() {
    let (_srv, target) = iperf3_server();
    let d = fathom_ok(&target, &["-n", "10M"]);
    assert_result(&d, "-n 10M");
    assert_eq!(
        n(&d, "/summary/sender_bytes"),
        10_485_760,
        "this end's count"
    );
    assert_eq!(n(&d, "/summary/bytes"), 10_485_760, "the server's count");
    let d = fathom_ok(&target, &["-n", "10M", "-R", "-P", "3"]);
    assert_result(&d, "-n 10M -R -P 3");
    assert_eq!(n(&d, "/summary/bytes"), 10_485_760, "this end's count");
    assert_eq!(
        n(&d, "/summary/sender_bytes"),
        10_485_760,
        "the server's count"
    );
    assert_eq!(d["flows"].as_array().unwrap().len(), 3);
    assert_eq!(d["test"]["direction"], "reverse");
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
    assert_eq!(doc, d, "show prints the run as --json printed it");
    assert_eq!(doc["schema_version"], 2, "{doc}");
    assert_eq!(doc["test"]["kind"], "stream", "{doc}");
    assert_eq!(doc["test"]["parallel"], 2, "{doc}");
    assert_eq!(doc["summary"]["bytes"], 10_485_760, "{doc}");
    assert_eq!(doc["summary"]["sender_bytes"], 10_485_760, "{doc}");
    assert_eq!(doc["hosts"][0]["role"], "client", "{doc}");
    assert_eq!(doc["flows"].as_array().unwrap().len(), 2, "{doc}");
    assert_result(&doc, "a stored iperf3 client run");
    assert_host_cpu(&doc, "local");
    let far = &doc["summary"]["cpu"]["remote"]["iperf3"];
    for key in ["total", "user", "system"] {
        assert!(far[key].is_number(), "the server's cpu_util_{key}: {far}");
    }
    let _ = std::fs::remove_file(&own);
}

#[test]
fn four_timed_streams_report_both_ends() {
    let (_srv, target) = iperf3_server();
    let d = fathom_ok(&target, &["-t", "1s", "-P", "4"]);
    assert_result(&d, "-t 1s -P 4");
    let flows = d["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4);
    assert!(
        flows.iter().all(|f| f["rtt_us"].as_u64() > Some(0)),
        "{d:#}"
    );
    let sent = n(&d, "/summary/sender_bytes");
    let got = n(&d, "/summary/bytes");
    assert!(got > 0 && got <= sent, "{got} of {sent}");
    assert!(d["summary"]["cpu"]["remote"]["iperf3"]["total"].is_number());
}

#[test]
fn the_servers_retransmits_and_congestion_control_are_its_flows() {
    let (_srv, target) = iperf3_server();
    let d = fathom_ok(&target, &["-t", "1s", "-R"]);
    assert_result(&d, "-t 1s -R");
    let flow = &d["flows"][0];
    assert_eq!(flow["direction"], "reverse");
    assert!(flow["retransmits"].is_u64(), "{flow}");
    let cc = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap();
    assert_eq!(flow["cc"], cc.trim(), "the server's congestion_used");
}

#[test]
fn udp_datagrams_are_counted_alike_at_both_ends() {
    let (_srv, target) = iperf3_server();
    let args = ["--rate", "5M", "-l", "1400", "-n", "1000", "-P", "2"];
    let (code, d, err) = fathom_kind("udp", &target, &args);
    assert_eq!(code, 0, "{err}");
    assert_result(&d, "udp -n 1000");
    assert_eq!(d["test"]["kind"], "udp");
    assert_eq!(n(&d, "/summary/sender_bytes"), 1_400_000);
    assert_eq!(n(&d, "/summary/udp/sender_datagrams"), 1000);
    // Loopback at a modest rate loses nothing: the server saw every datagram in sequence.
    assert_eq!(n(&d, "/summary/udp/datagrams"), 1000, "{d:#}");
    assert_eq!(n(&d, "/summary/udp/lost"), 0);
    assert!(
        d["flows"][0]["udp"]["jitter_us"].is_number(),
        "the server's jitter"
    );
    assert_eq!(n(&d, "/summary/bytes"), 1_400_000);
}

#[test]
fn udp_reverse_counts_what_the_server_sent() {
    let (_srv, target) = iperf3_server();
    let args = ["-R", "--rate", "4M", "-l", "1200", "-t", "1s"];
    let (code, d, err) = fathom_kind("udp", &target, &args);
    assert_eq!(code, 0, "{err}");
    assert_result(&d, "udp -R");
    let udp = &d["flows"][0]["udp"];
    let sent = n(udp, "/sender_datagrams");
    assert!(sent > 0, "{d:#}");
    // The server's own count of what it sent is what this end saw, none lost.
    assert_eq!(n(udp, "/datagrams"), sent, "{d:#}");
    assert_eq!(n(udp, "/lost"), 0);
    assert_eq!(n(&d, "/summary/bytes"), sent * 1200);
    assert!(udp["jitter_us"].is_number());
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
    let sent = n(&d, "/summary/sender_bytes");
    assert!(sent > 0 && sent < 4 * 12_500_000, "{sent} bytes");
    assert!(n(&d, "/summary/bytes") <= sent);
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
    assert_result(&d, "against fathom's own server");
    for direction in ["forward", "reverse"] {
        assert_eq!(
            flows_sum(&d, direction, "sender_bytes"),
            10_485_760,
            "{direction}"
        );
        assert_eq!(flows_sum(&d, direction, "bytes"), 10_485_760, "{direction}");
    }
}
