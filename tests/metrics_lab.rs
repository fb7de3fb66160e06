//! A real Prometheus scrapes two lab hosts' agents (issue 37): `fathom lab up --hosts 2`, an
//! agent with `--metrics` on each host's lab address, and Prometheus, started in h1's namespace
//! on a free loopback port with a generated config, scraping h1 and, across the lab's link, h2;
//! its HTTP API (`/api/v1/query`, loopback inside h1) answers PromQL with the expected series.
//! Needs root (the lab); without it the test prints SKIP, but under CI=true.
//!
//! Once the mesh runs in `fathom serve`, its series join [`EXPECTED`], and [`agent_args`] gives
//! the agents the mesh file.

mod common;
mod metrics_common;
use common::*;
use metrics_common::*;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;

/// The PromQL queries Prometheus must answer, each with the `host` labels (the scraped agent)
/// of the series it must return: the two agents scraped, and their own counts.
const EXPECTED: &[(&str, &[&str])] = &[
    (r#"up{job="fathom"} == 1"#, &["h1", "h2"]),
    ("fathom_agent_tests_served_total == 0", &["h1", "h2"]),
    ("fathom_agent_tests_running == 0", &["h1", "h2"]),
    ("fathom_agent_memory_reserved_bytes == 0", &["h1", "h2"]),
];

/// What each host's agent runs with beside `serve --listen 127.0.0.1:0`: its metrics on the
/// host's lab address.
fn agent_args(address: &str) -> Vec<String> {
    vec!["--metrics".into(), format!("{address}:0")]
}

/// The lab, removed when dropped, also when the test fails.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--name", &self.0], 120);
    }
}

/// An agent started inside `netns` (killed by its PID when dropped) and its metrics address.
fn agent_in(netns: &str, address: &str) -> (Agent, SocketAddr) {
    let ns = fathom_lab::netns::open(netns).unwrap();
    let mut cmd = fathom();
    // SAFETY: the closure only calls setns (async-signal-safe) on a descriptor opened before
    // the fork.
    unsafe { cmd.pre_exec(move || fathom_lab::netns::enter(&ns)) };
    let args = agent_args(address);
    let mut agent = Agent::start_with(cmd, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let addr = metrics_addr(&agent.next_log_line());
    (agent, addr)
}

#[test]
fn a_real_prometheus_scrapes_two_lab_hosts_agents() {
    if !root_or_ci() || !have("prometheus") {
        return;
    }
    let name = format!("metrics-{}", std::process::id());
    let _down = Down(name.clone());
    let up = run(&["lab", "up", "--hosts", "2", "--name", &name], 120);
    assert!(up.status.success(), "lab up: {}", stderr(&up));
    let lab = fathom_lab::Lab::load(&name).unwrap();
    let mut agents = Vec::new();
    let mut targets = Vec::new();
    for host in ["h1", "h2"] {
        let address = lab.host(host).unwrap().address().to_string();
        let (agent, metrics) = agent_in(lab.netns_of(host).unwrap(), &address);
        agents.push(agent);
        targets.push((host, metrics));
    }
    let prometheus = Prometheus::start(&targets, Some(lab.netns_of("h1").unwrap()));
    for (promql, want) in EXPECTED {
        let series = prometheus.wait_for(promql, want.len());
        let mut hosts: Vec<_> = series
            .iter()
            .map(|s| s["metric"]["host"].as_str().unwrap_or_default())
            .collect();
        hosts.sort_unstable();
        assert_eq!(hosts, *want, "{promql}: {series:?}");
    }
}
