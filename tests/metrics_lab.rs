//! A real Prometheus scrapes two lab hosts' mesh agents (issue 37): `fathom lab up --hosts 2`,
//! on each host an agent running its share of a mesh (`serve --mesh FILE --mesh-as hN`, keyed,
//! on the host's lab address) with `--metrics` on that address, and Prometheus, started in
//! h1's namespace on a free loopback port with a generated config, scraping h1 and, across the
//! lab's link, h2; its HTTP API (`/api/v1/query`, loopback inside h1) answers PromQL with each
//! agent's pair series, aggregates and health ([`EXPECTED`]). `promtool check metrics` passes
//! on a scrape of a mesh agent. Needs root (the lab); without it the test prints SKIP, but
//! under CI=true. The lab is removed even when the test fails.

mod common;
mod metrics_common;
use common::*;
use metrics_common::*;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

/// The port each mesh agent listens on, on its host's lab address (the lab's own agents have
/// 5301; the namespaces are this test's, so the port is free).
const MESH_PORT: u16 = 5399;

/// The PromQL queries Prometheus must answer, each with the `host` labels (the scraped agent)
/// of the series it must return: the two agents scraped, each one's pair series of its one
/// ring peer (h1 tests h2, h2 tests h1), its aggregates and its scheduler's health, and the
/// agents' own counts (each serves the other's tests).
const EXPECTED: &[(&str, &[&str])] = &[
    (r#"up{job="fathom"} == 1"#, &["h1", "h2"]),
    (
        r#"fathom_mesh_rr_latency_seconds_count{source="h1",peer="h2",test="rr"} > 0"#,
        &["h1"],
    ),
    (
        r#"fathom_mesh_rr_latency_seconds_count{source="h2",peer="h1",test="rr"} > 0"#,
        &["h2"],
    ),
    (
        r#"fathom_mesh_source_rr_latency_seconds_count{test="rr"} > 0"#,
        &["h1", "h2"],
    ),
    (
        r#"fathom_mesh_datagrams_sent_total{test="udp"} > 0"#,
        &["h1", "h2"],
    ),
    (
        r#"fathom_mesh_source_datagrams_received_total{test="udp"} > 0"#,
        &["h1", "h2"],
    ),
    (
        r#"fathom_mesh_tests_total{test="rr",outcome="run"} > 0"#,
        &["h1", "h2"],
    ),
    ("fathom_mesh_scheduler_lag_seconds_count > 0", &["h1", "h2"]),
    (
        "fathom_mesh_last_stored_timestamp_seconds > 1e9",
        &["h1", "h2"],
    ),
    ("fathom_mesh_sampled_peers == 1", &["h1", "h2"]),
    ("fathom_agent_tests_served_total > 0", &["h1", "h2"]),
    ("fathom_agent_tests_running >= 0", &["h1", "h2"]),
    ("fathom_agent_memory_reserved_bytes >= 0", &["h1", "h2"]),
];

/// The mesh of h1 and h2 (each the other's one ring peer) at their lab addresses: rr and a
/// small UDP probe (background, so it never waits for rr) every 2 s, each with a second to set
/// up (a loaded machine is slow to).
fn mesh_file(dir: &Path, addresses: &[(&str, String)]) -> String {
    let hosts: Vec<String> = addresses
        .iter()
        .map(|(n, a)| format!("{{ name = \"{n}\", addr = \"{a}:{MESH_PORT}\" }}"))
        .collect();
    let text = format!(
        "[mesh]\nname = \"labmetrics\"\npeers = 1\nkey_file = \"k\"\n\n\
         [members]\nhosts = [{}]\n\n\
         [[test]]\ncommand = \"rr --size 64 -t 100ms\"\nevery = \"2s\"\nsetup = \"1s\"\n\n\
         [[test]]\nname = \"udp\"\ncommand = \"udp --rate 1M -t 100ms\"\nclass = \"background\"\n\
         every = \"2s\"\nsetup = \"1s\"\n",
        hosts.join(", ")
    );
    std::fs::write(dir.join("k"), "0123456789abcdef0123456789abcdef").unwrap();
    let path = dir.join("mesh.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The lab, removed when dropped, also when the test fails.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--name", &self.0], 120);
    }
}

/// `host`'s mesh agent, started inside `netns` on `address` (killed by its PID when
/// dropped), and its metrics address.
fn agent_in(netns: &str, host: &str, address: &str, file: &str, dir: &Path) -> (Agent, SocketAddr) {
    let ns = fathom_lab::netns::open(netns).unwrap();
    let mut cmd = fathom();
    // SAFETY: the closure only calls setns (async-signal-safe) on a descriptor opened before
    // the fork.
    unsafe { cmd.pre_exec(move || fathom_lab::netns::enter(&ns)) };
    let key = dir.join("k");
    let db = dir.join(format!("{host}.db"));
    let metrics = format!("{address}:0");
    let listen = format!("{address}:{MESH_PORT}");
    let args = [
        "--key-file",
        key.to_str().unwrap(),
        "--mesh",
        file,
        "--mesh-as",
        host,
        "--store",
        db.to_str().unwrap(),
        "--metrics",
        &metrics,
    ];
    let mut agent = Agent::listening(cmd, &listen, &args);
    let addr = metrics_addr(&agent.next_log_line());
    (agent, addr)
}

#[test]
fn a_real_prometheus_scrapes_two_lab_hosts_mesh_agents() {
    if !root_or_ci() || !have("prometheus") || !have("promtool") {
        return;
    }
    let name = format!("metrics-{}", std::process::id());
    let _down = Down(name.clone());
    let up = run(&["lab", "up", "--hosts", "2", "--name", &name], 120);
    assert!(up.status.success(), "lab up: {}", stderr(&up));
    let lab = fathom_lab::Lab::load(&name).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hosts = ["h1", "h2"];
    let addresses: Vec<(&str, String)> = hosts
        .iter()
        .map(|h| (*h, lab.host(h).unwrap().address().to_string()))
        .collect();
    let file = mesh_file(dir.path(), &addresses);
    let mut agents = Vec::new();
    let mut targets = Vec::new();
    for (host, address) in &addresses {
        let netns = lab.netns_of(host).unwrap();
        let (agent, metrics) = agent_in(netns, host, address, &file, dir.path());
        agents.push(agent);
        targets.push((*host, metrics));
    }
    let h1 = lab.netns_of("h1").unwrap();
    let prometheus = Prometheus::start(&targets, Some(h1));
    for (promql, want) in EXPECTED {
        let series = prometheus.wait_for(promql, want.len());
        let mut hosts: Vec<_> = series
            .iter()
            .map(|s| s["metric"]["host"].as_str().unwrap_or_default())
            .collect();
        hosts.sort_unstable();
        assert_eq!(hosts, *want, "{promql}: {series:?}");
    }
    let by_address = prometheus.query(r#"{__name__=~"fathom_mesh_.*",peer=~".*[.:].*"}"#);
    assert!(by_address.is_empty(), "peers by name only: {by_address:?}");
    let stream = fathom_lab::connect_in(h1, targets[0].1, Duration::from_secs(5)).unwrap();
    let (code, text) = get_on(stream, "/metrics", "text/plain");
    assert_eq!(code, 200, "{text}");
    assert!(
        text.contains("fathom_mesh_rr_latency_seconds_bucket{"),
        "{text}"
    );
    let (ok, said) = promtool(&["check", "metrics"], &text);
    assert!(ok, "promtool check metrics: {said}\n{text}");
}
