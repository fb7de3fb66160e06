//! `fathom doctor HOST`: the far end's settings through its agent (the control protocol's
//! Settings request), then the short probe. On loopback against a keyed `fathom serve`, and in
//! a two-host lab where a setting made in the far host's namespace only must show under
//! `remote`, not under this host. Never asserts a speed.

mod common;

use common::{assert_doctor_valid, json, root_or_ci, run, stderr, welcomed, Agent};
use fathom_proto::{ToAgent, ToController, SETTINGS_FRAME};
use serde_json::Value;

#[test]
fn an_agent_answers_settings_with_a_report_within_the_bounds() {
    let addr = common::in_process(fathom::agent::AgentConfig::default());
    let mut c = welcomed(addr);
    c.send(&ToAgent::Settings).unwrap();
    let m = c.expect::<ToController>(SETTINGS_FRAME).unwrap();
    let ToController::Settings(report) = m else {
        panic!("not a settings report: {m:?}")
    };
    let s = fathom_advisor::wire::decode(&report).expect("a report within the bounds");
    assert!(s.cpus >= 1, "{s:?}");
    assert!(s.sysctls.contains_key("net.core.somaxconn"), "{s:?}");
    c.send(&ToAgent::Close).unwrap();
}

#[test]
fn doctor_host_reads_a_keyed_agent_and_probes_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "s3cret\n").unwrap();
    let key = key.to_str().unwrap();
    let agent = Agent::start(&["--key-file", key]);
    let target = agent.target();
    let out = run(&["doctor", &target, "--key-file", key, "--json"], 90);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_doctor_valid(&doc);
    let remote = &doc["remote"];
    assert_eq!(remote["host"], target.as_str());
    assert_eq!(remote["probe"]["transactions"], 20, "{remote:#}");
    assert!(
        remote["probe"]["rtt_p50_us"].as_f64().is_some(),
        "{remote:#}"
    );
    assert!(
        remote["probe"]["seconds"].as_f64().unwrap() > 0.0,
        "{remote:#}"
    );
    assert!(remote["advice"].is_array() && remote["findings"].is_array());
    let text = run(&["doctor", &target, "--key-file", key], 90);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains(&format!("path to {target}: rtt ")), "{text}");
}

#[test]
fn doctor_host_without_the_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "s3cret\n").unwrap();
    let agent = Agent::start(&["--key-file", key.to_str().unwrap()]);
    let out = run(&["doctor", &agent.target()], 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("key"), "{}", stderr(&out));
    let out = run(&["doctor", "--key-file", key.to_str().unwrap()], 30);
    assert_eq!(out.status.code(), Some(2), "--key-file needs HOST");
}

/// Whether `found` cites net.core.somaxconn at 64.
fn cites(found: &Value) -> bool {
    found
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["id"] == "somaxconn" && f["value"] == "64")
}

/// A two-host lab named for this process, removed when dropped (the test passing or not).
struct Lab(String);

impl Lab {
    /// A two-host lab, with `wan` on its link (none: a veth pair).
    fn up(tag: &str, wan: Option<&str>) -> Lab {
        let lab = Lab(format!("td{tag}{}", std::process::id()));
        let mut args = vec!["lab", "up", "--name", &lab.0, "--hosts", "2"];
        args.extend(wan.iter().flat_map(|w| ["--wan", w]));
        let out = run(&args, 60);
        assert!(out.status.success(), "lab up: {}", stderr(&out));
        lab
    }

    /// Host `name`'s agent as ADDRESS:PORT, from `lab status --json`.
    fn agent(&self, name: &str) -> String {
        let doc = json(&run(&["lab", "status", "--name", &self.0, "--json"], 30));
        let hosts = doc["hosts"].as_array().expect("hosts");
        let h = hosts.iter().find(|h| h["name"] == name).expect("the host");
        let addr = h["addresses"][0]
            .as_str()
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        format!("{addr}:{}", h["agent"]["port"])
    }

    /// Sets net.core.somaxconn (a per-namespace sysctl) to 64 in host `host`.
    fn low_somaxconn(&self, host: &str) {
        let set = "echo 64 > /proc/sys/net/core/somaxconn";
        let out = run(
            &[
                "lab", "exec", "--name", &self.0, host, "--", "sh", "-c", set,
            ],
            30,
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }

    /// `fathom ARGS` inside host `host`'s namespace (bounded).
    fn exec(&self, host: &str, args: &[&str], secs: u64) -> std::process::Output {
        let fathom = env!("CARGO_BIN_EXE_fathom");
        let head = ["lab", "exec", "--name", &self.0, host, "--", fathom];
        run(&[&head[..], args].concat(), secs)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let out = run(&["lab", "down", "--name", &self.0], 60);
        if !out.status.success() {
            eprintln!("lab down {}: {}", self.0, stderr(&out));
        }
    }
}

#[test]
fn doctor_host_in_a_lab_cites_the_far_hosts_setting_not_this_ones() {
    if !root_or_ci() {
        return;
    }
    let lab = Lab::up("h", None);
    let h2 = lab.agent("h2");
    lab.low_somaxconn("h2");
    let key = format!("/run/fathom/lab/{}/key", lab.0);
    let out = lab.exec("h1", &["doctor", &h2, "--key-file", &key, "--json"], 90);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_doctor_valid(&doc);
    assert!(cites(&doc["remote"]["findings"]), "{doc:#}");
    assert!(
        !cites(&doc["findings"]),
        "h1's own somaxconn is not 64: {doc:#}"
    );
    assert_eq!(doc["remote"]["probe"]["transactions"], 20);
}

#[test]
fn doctor_lab_reads_every_host_and_weighs_each_link_against_its_ends() {
    if !root_or_ci() {
        return;
    }
    let lab = Lab::up("l", Some("delay=50ms,rate=1G,loss=0.1%"));
    lab.low_somaxconn("h2");
    let out = run(&["doctor", "--lab", &lab.0, "--json"], 60);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_doctor_valid(&doc);
    let hosts = doc["lab"]["hosts"].as_array().expect("lab.hosts");
    let host = |n: &str| hosts.iter().find(|h| h["host"] == n).expect("the host");
    assert!(cites(&host("h2")["findings"]), "{doc:#}");
    assert!(!cites(&host("h1")["findings"]), "{doc:#}");
    let h1 = host("h1")["findings"].as_array().unwrap();
    let lab_made = |f: &&Value| f["id"] == "offload" || f["id"] == "mtu";
    assert!(
        h1.iter().filter(lab_made).all(|f| f["severity"] == "note"),
        "the emulator's own offloads and MTU are notes: {doc:#}"
    );
    let link = &doc["lab"]["links"][0];
    let found = link["findings"].as_array().expect("the link's findings");
    let ids: Vec<&str> = found.iter().filter_map(|f| f["id"].as_str()).collect();
    assert!(ids.contains(&"link_loss"), "{link:#}");
    // A namespace's tcp_rmem maximum is 6 MB unless raised; the link's BDP is 12.5 MB.
    let rmem = run(
        &[
            "lab",
            "exec",
            "--name",
            &lab.0,
            "h1",
            "--",
            "cat",
            "/proc/sys/net/ipv4/tcp_rmem",
        ],
        30,
    );
    let max: u64 = String::from_utf8_lossy(&rmem.stdout)
        .split_whitespace()
        .nth(2)
        .and_then(|m| m.parse().ok())
        .expect("tcp_rmem in h1");
    if max < 12_500_000 {
        let w = found
            .iter()
            .find(|f| f["id"] == "link_window")
            .expect("link_window");
        assert!(
            w["source"]
                .as_str()
                .unwrap()
                .starts_with("net.ipv4.tcp_rmem on h"),
            "{w}"
        );
    }
    let text = run(&["doctor", "--lab", &lab.0], 60);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains(&format!("h2 in lab {}", lab.0)), "{text}");
    assert!(text.contains(&format!("lab {} link ", lab.0)), "{text}");
}
