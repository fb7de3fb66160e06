//! WAN links in real labs, as root: the emulator's delay seen by ping, `lab wan set`, status and
//! counters, and clean removal — also after a forwarder was killed or its lab's state vanished.
//!
//! This test binary doubles as the fathom executable (`harness = false`): `lab up` starts each
//! WAN link's forwarder as `<this binary> lab wan-router …` and each agent as `<this binary>
//! serve …`, so `main` answers `lab …` with fathom's `lab` command and `serve …` with a stand-in agent
//! (accept and close). Its harness runs the tests one after another, since round-trip
//! measurements should not share the machine's CPUs with each other. Without root every test
//! prints SKIP and passes. Each test builds its own lab (named with the pid), tears it down
//! through a guard even when it fails, and bounds every command it runs.

#[path = "../crates/lab/tests/common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Parser;
use common::*;
use fathom::cli::lab::LabArgs;
use fathom_lab::{down, status, wan_links, Lab};

/// The command lines this binary answers besides running its tests.
#[derive(Parser)]
#[command(name = "fathom")]
enum Fathom {
    Lab(LabArgs),
    Serve {
        #[arg(long)]
        listen: String,
        #[arg(long)]
        key_file: PathBuf,
    },
}

type Test = fn();

const TESTS: [(&str, Test); 5] = [
    (
        "two_hosts_rtt_follows_the_wan_delay",
        two_hosts_rtt_follows_the_wan_delay,
    ),
    (
        "a_topology_file_wan_between_switches",
        a_topology_file_wan_between_switches,
    ),
    (
        "a_killed_forwarder_is_reported_and_removed",
        a_killed_forwarder_is_reported_and_removed,
    ),
    (
        "a_forwarder_stops_when_its_lab_state_vanishes",
        a_forwarder_stops_when_its_lab_state_vanishes,
    ),
    (
        "bad_params_are_refused_naming_the_key",
        bad_params_are_refused_naming_the_key,
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if matches!(args.get(1).map(String::as_str), Some("lab" | "serve")) {
        return act_as_fathom(&args);
    }
    if args.iter().any(|a| a == "--list") {
        TESTS.iter().for_each(|(name, _)| println!("{name}: test"));
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let chosen = TESTS.iter().filter(|(name, _)| {
        filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    });
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in chosen {
        ran += 1;
        if !root_or_skip(name) {
            continue;
        }
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(test));
        let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
        println!(
            "test {name} ... {verdict} ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failures: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// Runs `fathom lab …` with the lab's CLI, or `fathom serve …` as a stand-in agent.
fn act_as_fathom(args: &[String]) -> ExitCode {
    let parsed = Fathom::try_parse_from(args).unwrap_or_else(|e| e.exit());
    match parsed {
        Fathom::Lab(lab) => {
            let exe = std::env::current_exe().expect("own executable");
            match fathom::commands::lab::run(lab, &exe) {
                Ok(code) => ExitCode::from(code as u8),
                Err(e) => match fathom::commands::lab::failure(e) {
                    fathom::Failure::Usage(m) => {
                        eprintln!("fathom: {m}");
                        ExitCode::from(2)
                    }
                    fathom::Failure::Runtime(m) => {
                        eprintln!("fathom: {m}");
                        ExitCode::FAILURE
                    }
                    fathom::Failure::Reported => ExitCode::FAILURE,
                },
            }
        }
        Fathom::Serve { listen, key_file } => {
            let key = std::fs::read_to_string(&key_file).expect("key file");
            assert!(key.len() == 64, "the key file holds 64 hex digits");
            let listener = TcpListener::bind(&listen).expect("listen");
            println!("listening on {listen}");
            for stream in listener.incoming() {
                drop(stream);
            }
            ExitCode::SUCCESS
        }
    }
}

/// Runs `fathom lab ARGS` as a child process of this binary (as a user would), bounded to 60 s;
/// returns its exit code, stdout and stderr.
fn lab(args: &[&str]) -> (i32, String, String) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(exe)
        .arg("lab")
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Runs `fathom lab ARGS` and panics unless it succeeds; returns its stdout.
fn lab_ok(args: &[&str]) -> String {
    let (code, out, err) = lab(args);
    assert_eq!(code, 0, "fathom lab {args:?}: {err}{out}");
    out
}

/// The minimum round trip in ms of `count` pings from `host` of lab `name` to `addr`.
fn ping_min_ms(name: &str, host: &str, addr: &str, count: u32) -> f64 {
    let out = Command::new("timeout")
        .args(["20", "ip", "netns", "exec", &format!("fl-{name}-{host}")])
        .args([
            "ping",
            "-q",
            "-n",
            "-c",
            &count.to_string(),
            "-i",
            "0.05",
            "-w",
            "15",
            addr,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("rtt") || l.starts_with("round-trip"))
        .unwrap_or_else(|| panic!("no round trips from {host} to {addr}: {text}"));
    let numbers = line.split('=').nth(1).unwrap().trim();
    numbers.split('/').next().unwrap().parse().unwrap()
}

/// Asserts that pings from h1 to `addr` take `rtt_ms` at least and at most 0.5 ms more.
fn assert_rtt(name: &str, addr: &str, rtt_ms: f64) {
    let min = ping_min_ms(name, "h1", addr, 20);
    assert!(
        min >= rtt_ms && min <= rtt_ms + 0.5,
        "min RTT {min:.3} ms to {addr}, expected {rtt_ms} ms (+0.5)"
    );
}

/// The recorded forwarder pids of a lab.
fn forwarder_pids(lab: &Lab) -> Vec<u32> {
    let wans = &lab.layout().wans;
    wans.iter()
        .filter_map(|w| w.forwarder.as_ref())
        .map(|f| f.pid)
        .collect()
}

/// Waits up to `limit` for `pid` to be gone (or a zombie); returns whether it went.
fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| rest.starts_with('Z'))
        {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn two_hosts_rtt_follows_the_wan_delay() {
    let name = unique_name("wrtt");
    let root_before = root_links();
    let guard = LabGuard(name.clone());
    let out = lab_ok(&["up", "--hosts", "2", "--wan", "delay=25ms", "--name", &name]);
    assert!(out.contains("WAN link h1-h2: h1 -> h2 delay=25ms"), "{out}");
    assert_rtt(&name, "10.77.0.2", 50.0);

    let out = lab_ok(&["wan", "set", "--name", &name, "h1-h2", "delay=50ms"]);
    assert!(
        out.contains("h1 -> h2 delay=50ms; h2 -> h1 delay=50ms"),
        "{out}"
    );
    assert_rtt(&name, "10.77.0.2", 100.0);
    let out = lab_ok(&[
        "wan",
        "set",
        "--name",
        &name,
        "wan1",
        "delay=10ms",
        "--direction",
        "a-to-b",
    ]);
    assert!(
        out.contains("h1 -> h2 delay=10ms; h2 -> h1 delay=50ms"),
        "{out}"
    );
    assert_rtt(&name, "10.77.0.2", 60.0);

    let (code, json, err) = lab(&["status", "--name", &name, "--json"]);
    assert_eq!(code, 0, "{err}{json}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schema_version"], 2);
    let wan = &doc["wan"][0];
    assert_eq!(wan["name"], "h1-h2");
    assert_eq!(wan["ends"], serde_json::json!(["h1", "h2"]));
    assert_eq!(wan["forwarder"]["alive"], true);
    let a_to_b = wan["params"]["a_to_b"].as_str().unwrap();
    assert!(a_to_b.starts_with("delay=10ms,"), "{a_to_b}");
    assert!(wan["params"]["b_to_a"]
        .as_str()
        .unwrap()
        .starts_with("delay=50ms,"));
    for direction in ["a_to_b", "b_to_a"] {
        let c = &wan["counters"][direction];
        assert!(c["forwarded"].as_u64().unwrap() >= 60, "{direction}: {c}");
        assert!(c["delayed"].as_u64().unwrap() >= 60, "{direction}: {c}");
        assert_eq!(c["dropped_loss"], 0);
    }
    let text = lab_ok(&["status", "--name", &name]);
    assert!(text.contains("h1-h2     h1 -> h2   delay=10ms"), "{text}");

    // The library call the controller makes agrees.
    let lab_handle = Lab::load(&name).unwrap();
    let links = wan_links(&lab_handle).unwrap();
    assert_eq!(links[0].name, "h1-h2");
    assert!(links[0].counters.unwrap().a_to_b.forwarded >= 60);

    let pids = [agent_pids(&lab_handle), forwarder_pids(&lab_handle)].concat();
    let out = lab_ok(&["down", "--name", &name]);
    assert!(
        out.contains("3 namespaces, 2 agents, 1 forwarder stopped"),
        "{out}"
    );
    drop(guard);
    assert_gone(&name, &pids, &root_before);
}

fn a_topology_file_wan_between_switches() {
    let name = unique_name("wtopo");
    let root_before = root_links();
    let guard = LabGuard(name.clone());
    let file = std::env::temp_dir().join(format!("{name}.toml"));
    std::fs::write(
        &file,
        topology(
            &["h1", "h2", "h3"],
            &["sw1", "sw2"],
            &[["h1", "sw1"], ["h2", "sw1"], ["h3", "sw2"]],
        ) + r#"
[[wan]]
name = "long"
ends = ["sw1", "sw2"]
params = "delay=10ms"
b_to_a = "delay=20ms,loss=0%"
"#,
    )
    .unwrap();
    lab_ok(&["up", file.to_str().unwrap(), "--name", &name]);
    std::fs::remove_file(&file).unwrap();
    assert_rtt(&name, "10.77.0.3", 30.0);
    let near = ping_min_ms(&name, "h1", "10.77.0.2", 5);
    assert!(near < 5.0, "h1 to h2 stays on sw1: {near} ms");

    let sh = |script: &str| ["sh", "-c", script].map(String::from).to_vec();
    let lab_handle = Lab::load(&name).unwrap();
    let checks = [
        ("wan1", "test $(sysctl -n net.ipv4.ip_forward) = 0"),
        ("wan1", "! ip -o addr show | grep -v ' lo ' | grep -q inet"),
        (
            "wan1",
            "ethtool -k sw1 | grep -q 'tx-tcp-segmentation: off'",
        ),
        (
            "sw1",
            "ethtool -k wan1 | grep -q 'generic-receive-offload: off'",
        ),
        ("sw2", "ethtool -k wan1 | grep -q 'tx-checksumming: off'"),
    ];
    for (node, script) in checks {
        assert_eq!(
            lab_handle.exec(node, &sh(script)).unwrap(),
            0,
            "{node}: {script}"
        );
    }
    let st = status(&name).unwrap();
    assert!(!st.stale, "{:?}", st.problems);
    assert!(st.wan[0].params.b_to_a.starts_with("delay=20ms,"));
    drop(guard);
    assert_gone(&name, &forwarder_pids(&lab_handle), &root_before);
}

/// A lab of `hosts` hosts named for this process and `tag`, its WAN link 1 ms each way: its
/// name, the root namespace's links before it, its guard and the lab.
fn one_ms_lab(tag: &str, hosts: &str) -> (String, BTreeSet<String>, LabGuard, Lab) {
    let name = unique_name(tag);
    let root_before = root_links();
    let guard = LabGuard(name.clone());
    lab_ok(&[
        "up",
        "--hosts",
        hosts,
        "--wan",
        "delay=1ms",
        "--name",
        &name,
    ]);
    let lab = Lab::load(&name).unwrap();
    (name, root_before, guard, lab)
}

fn a_killed_forwarder_is_reported_and_removed() {
    let (name, root_before, _guard, lab_handle) = one_ms_lab("wkill", "3");
    let pid = forwarder_pids(&lab_handle)[0];
    // SAFETY: kill has no memory effects; `pid` is the forwarder this test's lab started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(gone_within(pid, Duration::from_secs(5)));
    let st = status(&name).unwrap();
    assert!(st.stale);
    let problems = st.problems.join("\n");
    assert!(
        problems.contains("forwarder of WAN link sw1-sw2"),
        "{problems}"
    );
    let (code, text, _) = lab(&["status", "--name", &name]);
    assert_eq!(code, 1, "a stale lab: {text}");
    assert!(text.contains(&format!("pid {pid} DEAD")), "{text}");
    let (code, out, err) = lab(&["wan", "set", "--name", &name, "sw1-sw2", "delay=2ms"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("is not running"), "{err}");

    let pids = agent_pids(&lab_handle);
    let report = down(&name).unwrap();
    assert_eq!((report.agents_stopped, report.forwarders_stopped), (3, 0));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_gone(&name, &pids, &root_before);
}

fn a_forwarder_stops_when_its_lab_state_vanishes() {
    let (name, root_before, _guard, lab_handle) = one_ms_lab("wlost", "2");
    let forwarder = forwarder_pids(&lab_handle)[0];
    let agents = agent_pids(&lab_handle);
    std::fs::remove_dir_all(lab_handle.state_dir()).unwrap();
    assert!(
        gone_within(forwarder, Duration::from_secs(3)),
        "the forwarder outlived its lab's state"
    );
    // Agents do not watch the state: stop the ones this test started, then remove the rest.
    for pid in &agents {
        // SAFETY: kill has no memory effects; these are the agents this test's lab started.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        assert!(gone_within(*pid, Duration::from_secs(5)));
    }
    let report = down(&name).unwrap();
    assert_eq!(report.namespaces.len(), 3, "{:?}", report.namespaces);
    assert_gone(&name, &[forwarder], &root_before);
}

fn bad_params_are_refused_naming_the_key() {
    let name = unique_name("wbad");
    let (code, _, err) = lab(&["up", "--hosts", "2", "--wan", "dealy=5ms", "--name", &name]);
    assert_eq!(code, 2, "bad usage: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown key 'dealy'"), "{err}");
    assert!(Lab::load(&name).is_err(), "nothing was made");

    let _guard = LabGuard(name.clone());
    lab_ok(&["up", "--hosts", "2", "--wan", "delay=1ms", "--name", &name]);
    let (code, _, err) = lab(&["wan", "set", "--name", &name, "h1-h2", "loss=5"]);
    assert_eq!(code, 2, "bad usage: {err}");
    assert!(err.contains("wan h1-h2: loss: '5' needs a '%'"), "{err}");
    let (code, _, err) = lab(&["wan", "set", "--name", &name, "nope", "delay=1ms"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no WAN link named 'nope' (WAN links: h1-h2)"),
        "{err}"
    );
    let st = status(&name).unwrap();
    assert!(
        st.wan[0].params.a_to_b.starts_with("delay=1ms,"),
        "unchanged"
    );
}
