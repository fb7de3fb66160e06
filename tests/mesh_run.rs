//! `fathom mesh` on loopback agents: a bad file refused at its FILE:LINE:COLUMN (exit 2); a
//! mesh run keeping a series per pair, never two exclusive tests on a member at once, its
//! status valid against its schema; a member down marked down and probed with back-off;
//! `serve --mesh` agents running their own shares, read back with `mesh status --agents`, and
//! refusing a controller without the key.

mod common;
mod mesh_common;

use common::{agents, json, run, stderr};
use mesh_common::{assert_status_valid, overlaps, pairs_of};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A mesh file of `members` (name, address) with a short rr every second and a short stream
/// every 4 s (with three members every stream holds two of them, so streams any more often
/// would leave the rr pairs no time), and `extra` lines in [mesh].
fn mesh_file(dir: &Path, members: &[(&str, String)], extra: &str) -> String {
    let hosts: Vec<String> = members
        .iter()
        .map(|(n, a)| format!("{{ name = \"{n}\", addr = \"{a}\" }}"))
        .collect();
    let text = format!(
        "[mesh]\nname = \"loop\"\npeers = 2\n{extra}\n\
         [members]\nhosts = [{}]\n\n\
         [[test]]\ncommand = \"rr --size 64 -t 100ms\"\nevery = \"1s\"\nsetup = \"600ms\"\n\n\
         [[test]]\nname = \"bulk\"\ncommand = \"stream -t 300ms\"\nevery = \"4s\"\nsetup = \"400ms\"\n",
        hosts.join(", ")
    );
    let path = dir.join("mesh.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_bad_mesh_file_exits_2_at_its_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "[members]\nhosts = [\"a\", \"b\"]\n\n[[test]]\nevery = \"1s\"\ncommand = \"rr --size 0\"\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let at = format!("{f}:6:15: command: --size");
    for args in [
        vec!["mesh", "check", f],
        vec!["mesh", "run", f, "--for", "1s"],
        vec!["mesh", "status", f],
        vec!["serve", "--listen", "127.0.0.1:0", "--mesh", f],
    ] {
        let out = run(&args, 30);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&at), "{args:?}: {err}");
    }
    std::fs::write(&file, "[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr --server x\"\nevery = \"1s\"\n").unwrap();
    let err = stderr(&run(&["mesh", "check", f], 30));
    assert!(
        err.contains(&format!("{f}:4:15: command: --server: not in a mesh file")),
        "{err}"
    );
}

#[test]
fn a_mesh_keeps_a_series_per_pair_and_never_overlaps_exclusive_tests() {
    let (_agents, targets) = agents(3);
    let dir = tempfile::tempdir().unwrap();
    let members: Vec<(&str, String)> = ["a", "b", "c"].into_iter().zip(targets).collect();
    let file = mesh_file(dir.path(), &members, "");
    let db = dir.path().join("m.db");
    let db = db.to_str().unwrap();
    let out = run(
        &["mesh", "run", &file, "--for", "7s", "--store", db, "--json"],
        60,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    assert_status_valid(&doc);
    let mut rr = pairs_of(&doc, "rr");
    rr.sort();
    let all: Vec<(String, String)> = [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]
    .iter()
    .map(|(s, t)| (s.to_string(), t.to_string()))
    .collect();
    assert_eq!(rr, all, "{doc:#}");
    assert!(pairs_of(&doc, "bulk").len() >= 3, "{doc:#}");
    assert!(
        doc["tests"][0]["counts"]["started"].as_u64().unwrap() >= 12,
        "{doc:#}"
    );
    let store = fathom_store::Store::open(db).unwrap();
    let runs = store.mesh_runs("loop").unwrap();
    assert!(runs.iter().all(|r| r.source != r.target));
    assert_eq!(overlaps(&runs), Vec::<String>::new());
    let listed = store.list_series(100).unwrap();
    assert_eq!(
        listed.len(),
        rr.len() + pairs_of(&doc, "bulk").len(),
        "a series per pair"
    );
    // Each stored run is the command it stands for.
    let first = store.load_run(1).unwrap();
    assert!(
        first.args.windows(2).any(|w| w[0] == "--server"),
        "{:?}",
        first.args
    );
    assert_eq!(first.command[..2], ["mesh", "run"]);
    let text = run(&["mesh", "status", &file, "--store", db], 30);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("source \\ target"), "{text}");
}

/// A listener that takes every connection and closes it at once, counting them: an agent
/// that is down (its port answers, it does not).
fn dead_agent() -> (String, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            c.fetch_add(1, Ordering::SeqCst);
            drop(s);
        }
    });
    (addr, count)
}

#[test]
fn a_member_down_is_marked_down_and_probed_with_back_off_not_in_a_tight_loop() {
    let (_agents, targets) = agents(2);
    let (dead, attempts) = dead_agent();
    let dir = tempfile::tempdir().unwrap();
    let members = [
        ("a", targets[0].clone()),
        ("b", targets[1].clone()),
        ("c", dead),
    ];
    let file = mesh_file(dir.path(), &members, "");
    let db = dir.path().join("m.db");
    let out = run(
        &[
            "mesh",
            "run",
            &file,
            "--for",
            "8s",
            "--store",
            db.to_str().unwrap(),
            "--json",
        ],
        60,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("c is down"), "{err}");
    let doc = json(&out);
    assert_status_valid(&doc);
    let c = &doc["members"][2];
    assert_eq!(
        (c["name"].as_str(), c["down"].as_bool()),
        (Some("c"), Some(true)),
        "{doc:#}"
    );
    // Four jobs a second involve c (32 of them in 8 s): without back-off, some 30
    // connections; with it, one that found it down and probes after 1, 2 and 4 s.
    let n = attempts.load(Ordering::SeqCst);
    assert!((2..=6).contains(&n), "{n} connections to the member down");
    assert!(
        doc["tests"][0]["counts"]["down"].as_u64().unwrap() > 20,
        "{doc:#}"
    );
}

/// A `fathom serve --mesh` child, killed (by its PID) when dropped.
struct MeshAgent(Child);

impl Drop for MeshAgent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Free loopback ports (bound and let go: a test on a shared machine can lose the race, rarely).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

#[test]
fn serve_mesh_agents_run_their_shares_and_only_a_keyed_controller_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef").unwrap();
    let ports = free_ports(3);
    let names = ["a", "b", "c"];
    let members: Vec<(&str, String)> = names
        .iter()
        .zip(&ports)
        .map(|(n, p)| (*n, format!("127.0.0.1:{p}")))
        .collect();
    let file = mesh_file(dir.path(), &members, "key_file = \"k\"");
    let stranger_dir = tempfile::tempdir().unwrap();
    let stranger = mesh_file(stranger_dir.path(), &members, "");
    let _agents: Vec<MeshAgent> = names
        .iter()
        .zip(&ports)
        .map(|(n, p)| {
            let db = dir.path().join(format!("{n}.db"));
            let mut c = Command::new(env!("CARGO_BIN_EXE_fathom"));
            c.args(["serve", "--listen", &format!("127.0.0.1:{p}")])
                .args([
                    "--key-file",
                    key.to_str().unwrap(),
                    "--mesh",
                    &file,
                    "--mesh-as",
                    n,
                ])
                .args(["--store", db.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            MeshAgent(c.spawn().unwrap())
        })
        .collect();
    std::thread::sleep(Duration::from_secs(7));
    let out = run(&["mesh", "status", &file, "--agents", "--json"], 30);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    assert_status_valid(&doc);
    let rr = pairs_of(&doc, "rr");
    for n in names {
        assert!(rr.iter().any(|(s, _)| s == n), "{n} ran no rr: {doc:#}");
    }
    assert!(
        doc["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["down"] == false),
        "{doc:#}"
    );
    let mut runs = Vec::new();
    for n in names {
        let st = fathom_store::Store::open(dir.path().join(format!("{n}.db"))).unwrap();
        let own = st.mesh_runs("loop").unwrap();
        assert!(
            own.iter().all(|r| r.source == n),
            "{n} stored another's test"
        );
        runs.extend(own);
    }
    assert_eq!(
        overlaps(&runs),
        Vec::<String>::new(),
        "slots are booked at both ends"
    );
    // Without the key, the agents give nothing: each is shown down, saying why.
    let out = run(&["mesh", "status", &stranger, "--agents", "--json"], 30);
    let doc = json(&out);
    assert!(doc["pairs"].as_array().unwrap().is_empty(), "{doc:#}");
    for m in doc["members"].as_array().unwrap() {
        assert_eq!(m["down"], true, "{m}");
        assert!(m["reason"].as_str().unwrap().contains("key"), "{m}");
    }
}

#[test]
fn members_found_by_discovery_join_the_mesh_as_they_appear() {
    let (_agents, targets) = agents(3);
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, format!("{}\n{}\n", targets[0], targets[1])).unwrap();
    let file = dir.path().join("mesh.toml");
    std::fs::write(
        &file,
        format!(
            "[members]\nfrom = \"hostfile:{}\"\nrefresh = \"1s\"\n\n\
             [[test]]\ncommand = \"rr -t 100ms\"\nevery = \"1s\"\nsetup = \"600ms\"\n",
            hosts.display()
        ),
    )
    .unwrap();
    let db = dir.path().join("m.db");
    let args = [
        "mesh",
        "run",
        file.to_str().unwrap(),
        "--for",
        "6s",
        "--json",
    ];
    let child = common::fathom()
        .args(args)
        .args(["--store", db.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    std::fs::write(
        &hosts,
        format!("{}\n{}\n{}\n", targets[0], targets[1], targets[2]),
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("members now:"), "{}", stderr(&out));
    let doc = json(&out);
    assert_status_valid(&doc);
    let rr = pairs_of(&doc, "rr");
    assert!(
        rr.iter().any(|(s, t)| *s == targets[2] || *t == targets[2]),
        "{doc:#}"
    );
    assert_eq!(doc["members"].as_array().unwrap().len(), 3, "{doc:#}");
}
