//! A mesh's metrics from one controller (`fathom mesh run FILE --metrics ADDR`) on loopback
//! agents: pair series for each source's ring peers only, labelled by member name, aggregates
//! and health for every source, every series the dashboard and the alert rules read,
//! `promtool check metrics` passing on a real scrape; and a member
//! found by discovery that leaves takes every series naming it along. (`serve --mesh
//! --metrics` is scraped by a real Prometheus in tests/metrics_lab.rs.)

mod common;
mod metrics_common;
use common::{agents, fathom, Agent};
use metrics_common::*;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A `fathom mesh run --metrics 127.0.0.1:0` child, killed (by its PID) when dropped, its
/// metrics address and the file its stderr goes to.
struct MeshRun {
    child: Child,
    metrics: SocketAddr,
    log: std::path::PathBuf,
}

impl MeshRun {
    /// Runs `file` for `secs` with its results in `db` and its log beside it.
    fn start(file: &Path, db: &Path, secs: u64) -> MeshRun {
        let log = db.with_extension("log");
        let child = fathom()
            .args(["mesh", "run", file.to_str().unwrap()])
            .args([
                "--for",
                &format!("{secs}s"),
                "--store",
                db.to_str().unwrap(),
            ])
            .args(["--metrics", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let metrics = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(line) = text.lines().find(|l| l.contains("metrics on")) {
                break metrics_addr(line);
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{text}");
            std::thread::sleep(Duration::from_millis(50));
        };
        MeshRun {
            child,
            metrics,
            log,
        }
    }

    /// Scrapes until `ok` holds of the sample lines (bounded at 60 s): the whole scrape.
    fn wait_for(&self, what: &str, ok: impl Fn(&[&str]) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.scrape();
            let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
            if ok(&lines) {
                return text;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{what}: not in 60 s:\n{text}\nthe mesh said: {}",
                self.said()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// A scrape of its endpoint, which must answer.
    fn scrape(&self) -> String {
        let stream = TcpStream::connect(self.metrics)
            .unwrap_or_else(|e| panic!("{}: {e}; the mesh said: {}", self.metrics, self.said()));
        let (code, body) = get_on(stream, "/metrics", "text/plain");
        assert_eq!(code, 200, "{body}");
        body
    }

    /// Its stderr so far.
    fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for MeshRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of label `name` in a sample line.
fn label(line: &str, name: &str) -> Option<String> {
    let at = line.find(&format!("{name}=\""))? + name.len() + 2;
    line[at..].split('"').next().map(str::to_string)
}

/// The pair series lines (`{source, peer}`) of family `name`'s `_count`.
fn pairs<'a>(lines: &[&'a str], name: &str) -> Vec<&'a str> {
    let prefix = format!("{name}_count{{");
    lines
        .iter()
        .copied()
        .filter(|l| l.starts_with(&prefix))
        .collect()
}

/// A mesh of listed members a, b, c at `targets`: one ring peer each, rr and a background UDP
/// probe every 2 s and a stream every 4 s (its pairs rotating), each with a second to set up
/// (a loaded machine is slow to).
fn listed_mesh(dir: &Path, targets: &[String]) -> std::path::PathBuf {
    let hosts: Vec<String> = ["a", "b", "c"]
        .iter()
        .zip(targets)
        .map(|(n, a)| format!("{{ name = \"{n}\", addr = \"{a}\" }}"))
        .collect();
    let path = dir.join("mesh.toml");
    std::fs::write(
        &path,
        format!(
            "[mesh]\nname = \"loop\"\npeers = 1\n\n[members]\nhosts = [{}]\n\n\
             [[test]]\ncommand = \"rr --size 64 -t 100ms\"\nevery = \"2s\"\nsetup = \"1s\"\n\n\
             [[test]]\nname = \"udp\"\ncommand = \"udp --rate 1M -t 100ms\"\n\
             class = \"background\"\nevery = \"2s\"\nsetup = \"1s\"\n\n\
             [[test]]\nname = \"bulk\"\ncommand = \"stream -t 100ms\"\nevery = \"4s\"\nsetup = \"1s\"\n",
            hosts.join(", ")
        ),
    )
    .unwrap();
    path
}

#[test]
fn mesh_run_metrics_hold_each_sources_ring_peer_by_name_and_pass_promtool() {
    let (_agents, targets) = agents(3);
    let dir = tempfile::tempdir().unwrap();
    let file = listed_mesh(dir.path(), &targets);
    let mesh = MeshRun::start(&file, &dir.path().join("m.db"), 120);
    let rr = "fathom_mesh_rr_latency_seconds";
    let text = mesh.wait_for("rr and UDP pair series from every source, a rate", |l| {
        let sources = |prefix: &str| {
            let mut s: Vec<_> = l
                .iter()
                .filter(|l| l.starts_with(prefix))
                .filter_map(|l| label(l, "source"))
                .collect();
            s.sort();
            s
        };
        sources("fathom_mesh_rr_latency_seconds_count{") == ["a", "b", "c"]
            && sources("fathom_mesh_datagrams_sent_total{") == ["a", "b", "c"]
            && !sources("fathom_mesh_throughput_bytes_per_second{").is_empty()
    });
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    for line in pairs(&lines, rr) {
        let (source, peer) = (label(line, "source").unwrap(), label(line, "peer").unwrap());
        assert!(["a", "b", "c"].contains(&peer.as_str()), "{line}");
        assert_ne!(source, peer, "{line}");
    }
    assert_eq!(pairs(&lines, rr).len(), 3, "one ring peer a source: {text}");
    for family in [
        "fathom_mesh_source_rr_latency_seconds_count",
        "fathom_mesh_scheduler_lag_seconds_count",
        "fathom_mesh_last_stored_timestamp_seconds",
        "fathom_mesh_sampled_peers",
    ] {
        let n = lines.iter().filter(|l| l.starts_with(family)).count();
        assert_eq!(n, 3, "{family} for every source: {text}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("fathom_mesh_tests_total{") && l.contains("outcome=\"run\"")),
        "{text}"
    );
    assert!(!text.contains("127.0.0.1"), "peers by name only: {text}");
    assert!(!text.contains("fathom_agent_"), "a mesh run is no agent");
    // What the dashboard and the alert rules read is what a real mesh exports (but for the
    // alerts, which need a path that changed, and the agents' own counts).
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/prometheus/fathom-mesh-rules.yml"
    );
    let rules = std::fs::read_to_string(rules).unwrap();
    let read = dashboard_queries()
        .iter()
        .chain([&rules])
        .flat_map(|q| metrics_read(q))
        .filter(|n| n != "fathom_mesh_alert" && !n.starts_with("fathom_agent_"))
        .collect::<std::collections::BTreeSet<_>>();
    for name in read {
        let exported = lines.iter().any(|l| {
            l.strip_prefix(name.as_str())
                .is_some_and(|r| r.starts_with(['{', ' ']))
        });
        assert!(
            exported,
            "read by the dashboard or the rules, not exported: {name}\n{text}"
        );
    }
    if have("promtool") {
        let (ok, said) = promtool(&["check", "metrics"], &text);
        assert!(ok, "promtool check metrics: {said}\n{text}");
    }
}

/// Writes the hostfile at `path`: a line per agent of `members`.
fn hostfile(path: &Path, members: &[&Agent]) {
    let lines: Vec<String> = members.iter().map(|a| a.target()).collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_member_that_leaves_the_mesh_takes_every_series_naming_it_along() {
    let (agents, _) = agents(3);
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    hostfile(&hosts, &agents.iter().collect::<Vec<_>>());
    let file = dir.path().join("mesh.toml");
    std::fs::write(
        &file,
        format!(
            "[mesh]\nname = \"found\"\npeers = 2\n\n\
             [members]\nfrom = \"hostfile:{}\"\nrefresh = \"1s\"\n\n\
             [[test]]\ncommand = \"rr -t 100ms\"\nevery = \"2s\"\nsetup = \"1s\"\n",
            hosts.display()
        ),
    )
    .unwrap();
    let mesh = MeshRun::start(&file, &dir.path().join("m.db"), 120);
    // Members found in a hostfile are named by its words (here, loopback addresses).
    let leaving = format!("\"{}\"", agents[2].target());
    let rr = "fathom_mesh_rr_latency_seconds";
    mesh.wait_for("pair series from and to the member that leaves", |l| {
        let p = pairs(l, rr);
        p.len() == 6 && p.iter().filter(|l| l.contains(&leaving)).count() == 4
    });
    hostfile(&hosts, &[&agents[0], &agents[1]]);
    let text = mesh.wait_for("no series naming the member that left", |l| {
        l.iter().all(|l| !l.contains(&leaving))
    });
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        pairs(&lines, rr).len(),
        2,
        "the two left test each other: {text}"
    );
    let sampled: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("fathom_mesh_sampled_peers{"))
        .collect();
    assert!(
        sampled.len() == 2 && sampled.iter().all(|l| l.ends_with(" 1")),
        "{text}"
    );
    // Results on their way when it left do not bring its series back.
    std::thread::sleep(Duration::from_secs(2));
    let again = mesh.scrape();
    assert!(!again.contains(&leaving), "{again}");
}
