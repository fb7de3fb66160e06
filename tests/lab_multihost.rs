//! Multi-host tests over namespace hosts made by `fathom lab` (root; CI runs them as root).
//! Every test makes its own uniquely named lab and removes it, also when it fails.

mod common;
use common::*;
use serde_json::Value;

/// One lab test at a time: each drives several hosts' agents on a 2-CPU machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A lab that is removed when dropped (and holds the one-at-a-time lock while it exists).
struct Lab {
    name: String,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Lab {
    fn up(tag: &str, hosts: u32) -> Option<Lab> {
        Self::up_with(tag, &["--hosts", &hosts.to_string()])
    }

    fn up_with(tag: &str, args: &[&str]) -> Option<Lab> {
        if !root_or_ci() {
            return None;
        }
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let lab = Lab {
            name: format!("mh{}{tag}", std::process::id()),
            _turn: turn,
        };
        let out = run(
            &[&["lab", "up", "--name", &lab.name][..], args].concat(),
            120,
        );
        assert!(out.status.success(), "lab up: {}", stderr(&out));
        Some(lab)
    }

    /// Runs `KIND --lab NAME ARGS` from `server` to `clients` (bounded) and parses its JSON,
    /// `kind_args` being KIND then ARGS.
    fn across_json(&self, server: &str, clients: &str, kind_args: &[&str]) -> Value {
        let (kind, args) = kind_args.split_first().expect("a kind");
        let lab_args = [&[*kind, "--lab", &self.name][..], args].concat();
        run_json(&across(server, clients, &lab_args), 120)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--name", &self.name], 120);
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn five_clients_two_connections_each_over_namespace_hosts() {
    let Some(lab) = Lab::up("a", 6) else { return };
    let j = lab.across_json("h1", "h2,h3,h4,h5,h6", &["stream", "-P", "2", "-t", "2"]);
    let hosts = j["hosts"].as_array().unwrap();
    assert_eq!(
        hosts
            .iter()
            .map(|h| h["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["h1", "h2", "h3", "h4", "h5", "h6"]
    );
    let total = j["summary"]["bytes"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(
        hosts[1..]
            .iter()
            .map(|h| h["bytes"].as_u64().unwrap())
            .sum::<u64>(),
        total,
        "per-host bytes sum to the total"
    );
    for h in hosts {
        assert!(h["cpu"]["total"].is_number(), "{}", h["name"]);
    }
    // Measured, and small next to the test (bench/multihost.py reports the figure on a quiet
    // machine; a loaded CI run may lose a first segment to a retransmission timeout).
    let skew = f(&j["summary"]["start_skew_us"]);
    assert!(skew < 500_000.0, "start skew {skew} µs");
    assert!(f(&j["summary"]["aggregate_bits_per_second"]) > 0.0);
}

#[test]
fn a_lab_host_agent_killed_mid_test_is_named() {
    let Some(lab) = Lab::up("b", 3) else { return };
    let status: Value =
        serde_json::from_slice(&run(&["lab", "status", "--name", &lab.name, "--json"], 30).stdout)
            .unwrap();
    let pid = status["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "h3")
        .and_then(|h| h["agent"]["pid"].as_i64())
        .expect("h3's agent pid");
    let args = across("h1", "h2,h3", &["stream", "--lab", &lab.name, "-t", "20"]);
    let out = run_and_lose_a_host(&args, || {
        // SAFETY: signals the agent our lab started for h3, by the PID the lab recorded.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let j = json(&out);
    assert!(
        j["error"].as_str().unwrap().contains("h3"),
        "{}",
        j["error"]
    );
    assert!(
        f(&j["hosts"][1]["bits_per_second"]) > 0.0,
        "h2 kept its results"
    );
}

#[test]
fn a_lab_host_as_the_only_server_needs_clients() {
    let Some(lab) = Lab::up("c", 2) else { return };
    let out = run(&["stream", "--lab", &lab.name, "h1", "-t", "1"], 30);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--clients"), "{}", stderr(&out));
}

#[test]
fn a_test_across_the_wan_emulator_records_its_parameters_and_counters() {
    let Some(lab) = Lab::up_with("d", &["--hosts", "2", "--wan", "delay=5ms"]) else {
        return;
    };
    let j = lab.across_json("h2", "h1", &["stream", "-t", "1"]);
    let wan = j["wan"].as_array().unwrap();
    assert_eq!(wan.len(), 1, "{}", j["wan"]);
    assert!(
        wan[0]["a_to_b"].as_str().unwrap().contains("delay=5ms"),
        "{}",
        wan[0]
    );
    assert!(wan[0]["counters_after"].is_object(), "{}", wan[0]);
    let forwarder = wan[0]["forwarder_cpu_s"].as_f64();
    assert!(
        forwarder.is_some_and(|s| s >= 0.0),
        "the forwarder's CPU is recorded apart: {}",
        wan[0]
    );
    let rtt = f(&j["flows"][0]["min_rtt_us"]);
    assert!(
        rtt >= 9_000.0,
        "the path's round trip includes the emulated 10 ms: {rtt} µs"
    );
}

#[test]
fn every_host_of_a_request_response_test_shows_its_transactions() {
    let Some(lab) = Lab::up("e", 3) else { return };
    let j = lab.across_json("h1", "h2,h3", &["rr", "-P", "2", "-t", "1"]);
    let hosts = j["hosts"].as_array().unwrap();
    let tps: Vec<f64> = hosts
        .iter()
        .map(|h| f(&h["transactions_per_second"]))
        .collect();
    assert!(
        tps.iter().all(|t| *t > 0.0),
        "every host answered or asked: {tps:?}"
    );
    let clients = tps[1] + tps[2];
    assert!(
        (tps[0] - clients).abs() <= 1e-6 * clients,
        "the server answered what its clients asked: {tps:?}"
    );
}

/// Four streams between two namespace hosts (a real path) on a host with fewer CPUs: a worker
/// per flow at each end, each receiver waiting in its reads, and every byte arrives.
#[test]
fn a_few_streams_on_a_real_path_get_a_worker_each() {
    let Some(lab) = Lab::up("f", 2) else { return };
    let j = lab.across_json("h1", "h2", &["stream", "-P", "4", "-n", "64M"]);
    assert_eq!(j["summary"]["bytes"].as_u64(), Some(64 << 20), "{j}");
    // Fewer CPUs than flows: one each; more: one per CPU, at most one per flow. Four either way.
    let workers: Vec<usize> = j["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["threads"].as_array().unwrap().len())
        .collect();
    assert_eq!(workers, [4, 4], "{j}");
}
