//! `fathom serve --iperf3` against the real iperf3 client (Debian's 3.12): the client's figures
//! are fathom's counts, byte counts are exact with `-n`, UDP lost/total are consistent, and a
//! busy server, an unsupported option, garbage and oversized or stalled control messages get
//! iperf3's errors or are cut off, leaving the agent's threads and descriptors at idle; with
//! `--store`, `fathom runs` lists the tests the agent answered.

mod common;
mod iperf3_common;
use iperf3_common::{assert_host_cpu, assert_peer_cpu, n, Server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn tcp_forward_receiver_figures_are_fathoms() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1"]);
    let (sent, received) = s.fathom_end();
    assert_eq!(sent, 0);
    assert!(received > 0);
    assert_eq!(n(&end["sum_received"]["bytes"]), received);
    assert!(n(&end["sum_sent"]["bytes"]) >= received);
}

#[test]
fn tcp_reverse_sender_figures_are_fathoms() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1", "-R"]);
    let (sent, received) = s.fathom_end();
    assert_eq!(received, 0);
    assert_eq!(n(&end["sum_sent"]["bytes"]), sent);
    assert!(n(&end["sum_received"]["bytes"]) > 0);
}

#[test]
fn four_streams_each_counted() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1", "-P", "4"]);
    let (_, received) = s.fathom_end();
    let streams = end["streams"].as_array().expect("streams");
    assert_eq!(streams.len(), 4);
    let per: u64 = streams.iter().map(|x| n(&x["receiver"]["bytes"])).sum();
    assert_eq!(per, received);
    assert_eq!(n(&end["sum_received"]["bytes"]), received);
}

#[test]
fn bidir_runs_both_ways() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1", "--bidir"]);
    let (sent, received) = s.fathom_end();
    assert!(sent > 0 && received > 0);
    assert_eq!(n(&end["sum_received"]["bytes"]), received);
    assert_eq!(n(&end["sum_sent_bidir_reverse"]["bytes"]), sent);
}

#[test]
fn byte_counts_are_exact_both_ways() {
    let s = Server::start();
    for args in [&["-n", "10M"][..], &["-n", "10M", "-R", "-P", "3"][..]] {
        let end = s.json(args);
        assert_eq!(n(&end["sum_sent"]["bytes"]), 10_485_760, "{args:?}");
        assert_eq!(n(&end["sum_received"]["bytes"]), 10_485_760, "{args:?}");
    }
}

#[test]
fn udp_lost_and_total_agree_with_the_datagrams() {
    let mut s = Server::start();
    let end = s.json(&["-u", "-b", "100M", "-l", "1400", "-t", "1"]);
    let (_, received) = s.fathom_end();
    let line = s.line_with("datagrams");
    let (r, sent) = (&end["sum_received"], &end["sum_sent"]);
    let total = n(&r["packets"]);
    let lost = n(&r["lost_packets"]);
    assert_eq!(n(&r["bytes"]), received);
    assert_eq!(received % 1400, 0);
    assert_eq!(received / 1400 + lost, total, "{end}");
    assert!(total <= n(&sent["packets"]) && total > 0);
    assert!(
        line.contains(&format!("{total} datagrams, {lost} lost")),
        "{line}"
    );
}

#[test]
fn a_second_client_is_told_the_server_is_busy() {
    let s = Server::start();
    let port = s.addr.port().to_string();
    let mut first = Command::new("timeout")
        .args(["30", "iperf3", "-c", "127.0.0.1", "-p", &port, "-t", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3");
    std::thread::sleep(Duration::from_millis(1500));
    let (code, text) = s.client(&["-t", "1"]);
    let _ = first.wait();
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("the server is busy running a test"), "{text}");
}

#[test]
fn an_unsupported_option_gets_iperf3s_error() {
    let s = Server::start();
    let started = Instant::now();
    let (code, text) = s.client(&["--sctp", "-t", "1"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no SCTP support available"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Connects to the iperf3 port with a 10 s read deadline.
fn connect(s: &Server) -> TcpStream {
    let c = TcpStream::connect(s.addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    c
}

/// Reads until the peer closes (or resets); panics if it stays open past the read deadline.
fn closed(mut c: TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    match c.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the server kept the connection: {e}"),
    }
    got
}

#[test]
fn garbage_is_cut_off_and_the_server_goes_on() {
    let mut s = Server::start();
    let mut c = connect(&s);
    let _ = c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\x7f garbage garbage");
    closed(c);
    let end = s.json(&["-t", "1"]);
    assert_eq!(n(&end["sum_received"]["bytes"]), s.fathom_end().1);
}

#[test]
fn an_oversized_json_length_is_refused() {
    let s = Server::start();
    let mut c = connect(&s);
    c.write_all(b"abcdefghijklmnopqrstuvwxyz2345672345\0")
        .unwrap();
    let mut state = [0u8; 1];
    c.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 9, "PARAM_EXCHANGE");
    c.write_all(&0x7fff_ffffu32.to_be_bytes()).unwrap();
    assert_eq!(closed(c), recv_params_refused());
}

/// SERVER_ERROR, i_errno 114 ("unable to receive parameters from client"), errno 0.
fn recv_params_refused() -> Vec<u8> {
    let mut want = vec![0xfe];
    want.extend_from_slice(&114i32.to_be_bytes());
    want.extend_from_slice(&0i32.to_be_bytes());
    want
}

fn proc_count(pid: u32, what: &str) -> usize {
    match what {
        "fds" => std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count()),
        _ => std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()),
    }
}

#[test]
fn half_open_and_stalled_connections_leave_the_agent_idle() {
    let s = Server::start();
    let pid = s.pid();
    // Idle is measured after one test, once what the agent opens lazily is open.
    assert_eq!(s.client(&["-t", "1"]).0, 0);
    std::thread::sleep(Duration::from_millis(500));
    let (fds0, threads0) = (proc_count(pid, "fds"), proc_count(pid, "threads"));
    let mut stalled = connect(&s);
    stalled
        .write_all(b"abcdefghijklmnopqrstuvwxyz2345672345\0")
        .unwrap();
    for _ in 0..4 {
        let batch: Vec<TcpStream> = (0..250)
            .filter_map(|_| TcpStream::connect(s.addr).ok())
            .collect();
        assert!(batch.len() > 200);
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut state = [0u8; 1];
    stalled.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 9);
    assert_eq!(
        closed(stalled),
        recv_params_refused(),
        "a stalled exchange is cut off"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while (proc_count(pid, "fds"), proc_count(pid, "threads")) != (fds0, threads0) {
        assert!(
            Instant::now() < deadline,
            "fds {} (idle {fds0}), threads {} (idle {threads0})",
            proc_count(pid, "fds"),
            proc_count(pid, "threads")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, text) = s.client(&["-t", "1"]);
    assert_eq!(code, 0, "{text}");
}

/// `fathom ARGS` (bounded): its stdout, asserting it exits 0.
fn fathom(args: &[&str]) -> String {
    let out = Command::new("timeout")
        .arg("30")
        .arg(env!("CARGO_BIN_EXE_fathom"))
        .args(args)
        .output()
        .expect("fathom");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fathom {args:?}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_agents_store_lists_the_iperf3_tests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("agent.db").display().to_string();
    let mut s = Server::start_with(&["--store", &db]);
    let end = s.json(&["-t", "2", "-P", "2"]);
    let (_, received) = s.fathom_end();
    s.line_with("stored as run 1");
    s.json(&["-u", "-b", "10M", "-t", "1", "-R"]);
    s.line_with("stored as run 2");
    let runs: Value = serde_json::from_str(&fathom(&["runs", "--store", &db, "--json"])).unwrap();
    let runs = runs["runs"].as_array().expect("runs");
    let kinds: Vec<&str> = runs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["udp", "stream"], "newest first: {runs:?}");
    for r in runs {
        assert_eq!(
            r["server"].as_str(),
            Some(s.addr.to_string().as_str()),
            "{r}"
        );
        assert!(
            r["clients"].as_str().unwrap().starts_with("127.0.0.1:"),
            "{r}"
        );
        assert!(r["primary_value"].as_f64().unwrap() > 0.0, "{r}");
    }
    let show = fathom(&["show", "1", "--store", &db, "--json"]);
    let run: Value = serde_json::from_str(&show).unwrap();
    assert_eq!(run["test"]["parallel"].as_u64(), Some(2), "{}", run["test"]);
    assert_eq!(run["test"]["direction"].as_str(), Some("forward"));
    assert_eq!(n(&run["summary"]["bytes"]), received);
    assert_eq!(received, n(&end["sum_received"]["bytes"]));
    let intervals = run["intervals"].as_array().expect("intervals");
    assert!(intervals.len() >= 2, "one a second: {intervals:?}");
    let flow = &intervals[0]["flows"][0];
    assert!(n(&flow["rtt_us"]) > 0, "TCP_INFO of each interval: {flow}");
    assert!(
        run["summary"]["cpu"]["remote"]["fathom_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    host_cpu_and_the_clients(&run, &end);
    let table = fathom(&["runs", "--store", &db]);
    assert!(table.contains("stream") && table.contains("udp"), "{table}");
    for id in ["1", "2"] {
        let shown = fathom(&["show", id, "--store", &db]);
        assert!(shown.contains(&s.addr.to_string()), "{shown}");
    }
    let shown = fathom(&["show", "1", "--store", &db]);
    assert!(shown.contains("iperf3's process"), "{shown}");
    assert!(shown.contains("local not measured"), "{shown}");
}

/// The stored run of a test fathom answered: this host's CPU and service demand are read, and
/// the client's CPU is what the iperf3 client sent (its `-J` shows the same figures).
fn host_cpu_and_the_clients(run: &Value, end: &Value) {
    common::assert_valid(run, "a stored iperf3 run");
    assert_host_cpu(run, "remote");
    let cpu = &run["summary"]["cpu"];
    let sent = &end["cpu_utilization_percent"];
    assert_peer_cpu(&cpu["local"]["iperf3"], |k| {
        sent[format!("host_{k}")].as_f64()
    });
}
