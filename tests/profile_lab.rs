//! `profile run --lab LAB` with groups whose `remote` names a lab host: the run moves into the
//! lab's first host, each host name becomes its agent's address, and the groups' barriers and
//! exact counts hold as on loopback.

mod common;
mod wan_common;
use common::*;
use wan_common::{root_or_skip, TestLab};

const PROFILE: &str = r#"name = "lab-two"

[[group]]
name = "a"
remote = "h2"
threads = 2

[[group.transaction]]
barrier = true
flowops = [{ op = "connect" }, { op = "think", time = "200ms" }]

[[group.transaction]]
iterations = 10
flowops = [{ op = "write", size = 1000 }]

[[group]]
name = "b"
remote = "h2"

[[group.transaction]]
barrier = true
flowops = [{ op = "connect" }]

[[group.transaction]]
iterations = 5
flowops = [{ op = "write", size = 10 }, { op = "read", size = 10 }]
"#;

#[test]
fn groups_aimed_at_a_lab_host_run_from_the_lab() {
    if !root_or_skip("profile run --lab") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lab-two.toml");
    std::fs::write(&file, PROFILE).unwrap();
    let lab = TestLab::up("plab", "delay=1ms");
    let doc = run_json(
        &[
            "profile",
            "run",
            file.to_str().unwrap(),
            "--lab",
            &lab.name,
            "--json",
            "--no-store",
        ],
        60,
    );
    drop(lab);
    let t = &doc["totals"];
    assert_eq!(t["failed"], 0, "{doc}");
    assert_eq!(u(&t["client_sent"]), 2 * 10 * 1_000 + 5 * 10, "{t}");
    assert_eq!(u(&t["server_sent"]), 5 * 10, "{t}");
    for g in doc["groups"].as_array().unwrap() {
        let agent = g["report"]["test"]["agent"].as_str().unwrap();
        assert!(agent.starts_with("10.77.0.2:"), "{agent}");
    }
}
