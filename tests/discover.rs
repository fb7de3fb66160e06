//! `--agents-from hostfile:` and `slurm` end to end: agents found in a hostfile (loopback ports)
//! run a real test with exact byte counts and per-group results; bad sources and too few agents
//! are refused with one line and the right exit code.

mod common;
use common::*;

/// A hostfile in the test's temporary directory.
fn hostfile(name: &str, text: &str) -> String {
    let path = format!(
        "{}/{name}-{}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A 1 MB stream across the agents of `source`, expecting 3 and going on with 2.
fn two_of_three(source: &str) -> [&str; 10] {
    [
        "stream",
        "--agents-from",
        source,
        "--expect",
        "3",
        "--min-agents",
        "2",
        "-n",
        "1M",
        "--json",
    ]
}

#[test]
fn hostfile_agents_run_a_test_with_exact_bytes_and_per_group_rows() {
    let (_agents, t) = agents(4);
    let path = hostfile(
        "hosts-groups",
        &format!(
            "# the server first\n{} slots=1\n{} slots=2 # group=rack1\n{} # group=rack1\n{} group=rack2\n",
            t[0], t[1], t[2], t[3]
        ),
    );
    let source = format!("hostfile:{path}");
    let j = run_json(
        &["stream", "--agents-from", &source, "-n", "8M", "--json"],
        120,
    );
    assert_valid(&j, "a discovered multi-host stream");
    assert_eq!(u(&j["summary"]["bytes"]), 8 << 20);
    let hosts = j["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 4);
    assert_eq!(hosts[0]["name"], t[0].as_str());
    assert!(hosts[0].get("group").is_none(), "no group, no field");
    let groups: Vec<_> = hosts[1..]
        .iter()
        .map(|h| h["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["rack1", "rack1", "rack2"]);
    let g = j["groups"].as_array().unwrap();
    assert_eq!(
        (g[0]["name"].as_str(), u(&g[0]["hosts"])),
        (Some("rack1"), 2)
    );
    assert_eq!(
        u(&g[0]["bytes"]),
        u(&hosts[1]["bytes"]) + u(&hosts[2]["bytes"])
    );
    assert_eq!(u(&g[0]["bytes"]) + u(&g[1]["bytes"]), 8 << 20);
    let table = run_ok(
        &[
            "stream",
            "--agents-from",
            &source,
            "--clients",
            &t[3],
            "-n",
            "1M",
            "-q",
        ],
        120,
    );
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("group rack2") && !text.contains("group rack1"),
        "{text}"
    );
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_server_picked_by_index_and_clients_by_host_list() {
    let (_agents, t) = agents(3);
    let path = hostfile("hosts-pick", &format!("{}\n{}\n{}\n", t[0], t[1], t[2]));
    let source = format!("hostfile:{path}");
    let args = [
        "rr",
        "--agents-from",
        &source,
        "--server-index",
        "2",
        "-n",
        "600",
        "--json",
    ];
    let j = run_json(&args, 120);
    assert_eq!(j["hosts"][0]["name"], t[2].as_str());
    assert_eq!(j["test"]["clients"].as_array().unwrap().len(), 2);
    assert_eq!(u(&j["summary"]["rr"]["transactions"]), 600);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn bad_sources_are_usage_errors_in_one_line() {
    let bad = hostfile("hosts-bad", "node01 slots=2\n\nnode02 cpus=4\n");
    let cases: [(&[&str], &str); 5] = [
        (&["--agents-from", "ldap:x"], "is not a source"),
        (
            &["--agents-from", &format!("hostfile:{bad}")],
            "line 3: 'cpus=4'",
        ),
        (
            &["--agents-from", "hostfile:/nonexistent/hosts"],
            "hostfile /nonexistent/hosts:",
        ),
        (&["--agents-from", "slurm", "--expect", "0"], "--expect"),
        (
            &["--agents-from", "dns:_x._tcp.agents:5301"],
            "SRV records carry their ports",
        ),
    ];
    for (args, says) in cases {
        let out = run(&[&["stream"][..], args].concat(), 30);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    std::fs::remove_file(bad).unwrap();
}

#[test]
fn too_few_agents_fail_naming_them_unless_min_agents_allows() {
    let (_agents, t) = agents(2);
    let path = hostfile("hosts-few", &format!("{}\n{}\n", t[0], t[1]));
    let source = format!("hostfile:{path}");
    let named = format!("node[07-08],{}", t[1]);
    let err = run_exit(
        &[
            "stream",
            "--agents-from",
            &source,
            "--clients",
            &named,
            "-n",
            "1M",
        ],
        30,
        1,
    );
    assert!(err.contains("missing: node07, node08"), "{err}");
    let args = two_of_three(&source);
    let out = run_ok(&args, 60);
    assert!(stderr(&out).contains("warning: expected 3 agents, found 2; missing: 1 not listed"));
    assert_eq!(u(&json(&out)["summary"]["bytes"]), 1 << 20);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn slurm_reads_the_job_node_list() {
    let out = fathom()
        .args(["stream", "--agents-from", "slurm", "-n", "1M"])
        .env("SLURM_JOB_NODELIST", "node[01-")
        .output()
        .unwrap();
    assert_exit(&out, 2, "slurm: SLURM_JOB_NODELIST: 'node[01-'");
    let unset = fathom()
        .args(["stream", "--agents-from", "slurm"])
        .env_remove("SLURM_JOB_NODELIST")
        .env_remove("SLURM_NODELIST")
        .output()
        .unwrap();
    assert_says(&unset, "run inside a Slurm job");
}

#[test]
fn udp_and_sweeps_take_the_found_agents_too() {
    let (_agents, t) = agents(3);
    let path = hostfile("hosts-udp", &format!("{}\n{}\n{}\n", t[0], t[1], t[2]));
    let source = format!("hostfile:{path}");
    let j = run_json(
        &["udp", "--agents-from", &source, "-n", "2000", "--json"],
        120,
    );
    assert_eq!(j["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(
        j["flows"].as_array().unwrap().len(),
        2,
        "one flow from each found client"
    );
    let args = [
        "sweep",
        "stream",
        "--agents-from",
        &source,
        "-n",
        "1M",
        "--vary",
        "parallel=1,2",
        "--json",
    ];
    let doc = run_json(&args, 120);
    assert_eq!(doc["points"].as_array().unwrap().len(), 2);
    assert_eq!(doc["complete"], true);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn an_agent_that_cannot_be_reached_is_missing_and_min_agents_goes_on_without_it() {
    let (_agents, t) = agents(2);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = closed.local_addr().unwrap().to_string();
    drop(closed);
    let path = hostfile("hosts-gone", &format!("{}\n{}\n{gone}\n", t[0], t[1]));
    let source = format!("hostfile:{path}");
    let out = run(&["stream", "--agents-from", &source, "-n", "1M"], 60);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("missing: {gone} (unreachable")),
        "{err}"
    );
    assert!(err.contains("--min-agents"), "{err}");
    let args = two_of_three(&source);
    let out = run(&args, 60);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "warning: expected 3 agents, found 2; missing: {gone} (unreachable"
        )),
        "{err}"
    );
    assert_eq!(u(&json(&out)["summary"]["bytes"]), 1 << 20);
    std::fs::remove_file(path).unwrap();
}
