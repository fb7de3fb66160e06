//! Synchronized multi-host tests over loopback agents: one server, several clients, one timeline.
//! (tests/lab_multihost.rs runs the same over namespace hosts.)

mod common;
use common::*;
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn targets(agents: &[Agent]) -> String {
    agents
        .iter()
        .map(Agent::target)
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `kind_args` (see [`across`]) from a new server agent to `clients` new client agents:
/// its JSON result, once it succeeded.
fn across_fresh_agents(clients: usize, kind_args: &[&str]) -> Value {
    let server = Agent::start(&[]);
    let clients: Vec<Agent> = (0..clients).map(|_| Agent::start(&[])).collect();
    let out = run_ok(
        &across(&server.target(), &targets(&clients), kind_args),
        120,
    );
    json(&out)
}

#[test]
fn five_clients_two_connections_each_add_up() {
    let j = across_fresh_agents(5, &["stream", "-P", "2", "-t", "2"]);
    assert_eq!(j["flows"].as_array().unwrap().len(), 10);
    let hosts = j["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 6);
    assert_eq!(hosts[0]["role"], "server");
    let s = &j["summary"];
    let client_bytes: u64 = hosts[1..]
        .iter()
        .map(|h| h["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(
        client_bytes,
        s["bytes"].as_u64().unwrap(),
        "per-host bytes sum to the total"
    );
    assert_eq!(
        hosts[0]["bytes"], s["bytes"],
        "the server received everything"
    );
    for h in hosts {
        assert!(
            f(&h["cpu"]["total"]) > 0.0,
            "every host's CPU is reported: {}",
            h["name"]
        );
        assert!(f(&h["bits_per_second"]) > 0.0, "{}", h["name"]);
    }
    assert!(f(&s["aggregate_bits_per_second"]) > 0.0 && f(&s["overlap_bits_per_second"]) > 0.0);
    assert!(s["start_skew_us"].is_number());
    assert_eq!(j["test"]["parallel"], 2);
    assert_eq!(j["test"]["clients"].as_array().unwrap().len(), 5);
}

#[test]
fn a_host_with_a_shifted_clock_still_lines_up() {
    let server = Agent::start(&[]);
    let clients = [
        Agent::start(&[]),
        Agent::start(&["--test-clock-shift", "2s"]),
        Agent::start(&[]),
    ];
    let j = run_json(
        &across(&server.target(), &targets(&clients), &["stream", "-t", "1"]),
        120,
    );
    let offset = f(&j["hosts"][2]["clock_offset_us"]);
    assert!(
        (offset - 2e6).abs() < 5_000.0,
        "the shift is seen as the offset: {offset} µs"
    );
    let skew = f(&j["summary"]["start_skew_us"]);
    assert!(
        skew < 200_000.0,
        "hosts start together despite the shift: skew {skew} µs"
    );
}

#[test]
fn a_client_agent_killed_mid_test_is_named_and_the_others_results_kept() {
    let server = Agent::start(&[]);
    let mut clients = vec![Agent::start(&[]), Agent::start(&[]), Agent::start(&[])];
    let victim = clients[1].target();
    let (server, others) = (server.target(), targets(&clients));
    let args = across(&server, &others, &["stream", "-t", "20"]);
    let out = run_and_lose_a_host(&args, || clients[1].child.kill().unwrap());
    let j = json(&out);
    let error = j["error"].as_str().unwrap();
    assert!(error.contains(&victim), "the error names the host: {error}");
    let hosts = j["hosts"].as_array().unwrap();
    for (i, h) in hosts.iter().enumerate().filter(|(i, _)| *i != 2) {
        assert!(
            f(&h["bits_per_second"]) > 0.0,
            "host {i} kept its results: {h}"
        );
    }
}

#[test]
fn request_response_across_hosts_counts_exactly() {
    let s = &across_fresh_agents(2, &["rr", "-P", "2", "-n", "4000"])["summary"]["rr"];
    assert_eq!(s["transactions"].as_u64(), Some(4000));
    assert_eq!(s["answered"].as_u64(), Some(4000));
}

#[test]
fn clients_without_a_server_is_a_usage_error() {
    let out = run(&["stream", "--clients", "127.0.0.1:1"], 10);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--server"), "{}", stderr(&out));
}
