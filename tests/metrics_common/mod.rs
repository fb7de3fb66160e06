//! A real Prometheus for the metrics tests (Debian's `prometheus`): started on a free loopback
//! port, in the root namespace or a lab host's, with a generated config and a temporary storage
//! directory, stopped by its PID when dropped; its HTTP API read over plain HTTP/1.0. Also
//! `promtool`, and a GET of an endpoint's exposition. Each test uses part of it.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `program` is on the PATH; without it a test skips, saying so, but under CI=true,
/// where scripts/install-test-deps.sh installed it.
pub fn have(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is missing: scripts/install-test-deps.sh installs it"
        );
        eprintln!("SKIP: no {program} (scripts/install-test-deps.sh installs it)");
    }
    found
}

/// The address in an agent's `fathom serve: metrics on http://ADDR/metrics` line.
pub fn metrics_addr(line: &str) -> SocketAddr {
    line.split("http://")
        .nth(1)
        .and_then(|rest| rest.trim().strip_suffix("/metrics"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no metrics address in: {line}"))
}

/// Sends `GET path` with `accept` on `stream` and reads the answer: (status code, body).
pub fn get_on(mut stream: TcpStream, path: &str, accept: &str) -> (u16, String) {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = format!("GET {path} HTTP/1.0\r\nHost: test\r\nAccept: {accept}\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, body.to_string())
}

/// The exposition at `http://addr/metrics` in the Prometheus text format (what promtool reads).
pub fn scrape(addr: SocketAddr) -> String {
    let (code, body) = get_on(TcpStream::connect(addr).unwrap(), "/metrics", "text/plain");
    assert_eq!(code, 200, "{body}");
    body
}

/// Runs `promtool ARGS` with `stdin`, bounded in time: (success, stdout and stderr).
pub fn promtool(args: &[&str], stdin: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = wait_bounded(child, 60);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// Waits for `child` at most `secs`, killing it (by its PID) past that.
fn wait_bounded(child: Child, secs: u64) -> std::process::Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(tx.send(child.wait_with_output())));
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| {
            // SAFETY: signals the child this test spawned, by its PID.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("pid {pid} did not finish in {secs} s")
        })
        .expect("output")
}

/// A Prometheus server this test started, killed by its PID when dropped.
pub struct Prometheus {
    child: Child,
    addr: SocketAddr,
    netns: Option<String>,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts Prometheus inside `netns` (or here) on a free loopback port, scraping each
    /// `(host, address)` target's `/metrics` every second with the label `host`; waits until
    /// it is ready.
    pub fn start(targets: &[(&str, SocketAddr)], netns: Option<&str>) -> Prometheus {
        let dir = tempfile::Builder::new()
            .prefix("fathom-prometheus")
            .tempdir()
            .unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(&config, config_text(targets)).unwrap();
        let addr = free_loopback_port(netns);
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--log.level=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("log")).unwrap());
        if let Some(ns) = netns {
            let ns = fathom_lab::netns::open(ns).unwrap();
            // SAFETY: the closure only calls setns (async-signal-safe) on a descriptor opened
            // before the fork.
            unsafe { cmd.pre_exec(move || fathom_lab::netns::enter(&ns)) };
        }
        let child = cmd.spawn().expect("prometheus");
        let p = Prometheus {
            child,
            addr,
            netns: netns.map(str::to_string),
            dir,
        };
        p.wait_ready();
        p
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        let timeout = Duration::from_secs(2);
        match &self.netns {
            Some(ns) => fathom_lab::connect_in(ns, self.addr, timeout),
            None => TcpStream::connect_timeout(&self.addr, timeout),
        }
    }

    fn wait_ready(&self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            if let Ok(s) = self.connect() {
                if get_on(s, "/-/ready", "*/*").0 == 200 {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("Prometheus not ready in 60 s: {}", self.log());
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// `GET /api/v1/PATH`'s `data`, asserting success.
    pub fn api(&self, path: &str) -> Value {
        let (code, body) = get_on(self.connect().unwrap(), &format!("/api/v1/{path}"), "*/*");
        let doc: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {code} {body}"));
        assert_eq!(doc["status"], "success", "{path}: {body}");
        doc["data"].clone()
    }

    /// The instant vector `promql` evaluates to now.
    pub fn query(&self, promql: &str) -> Vec<Value> {
        let data = self.api(&format!("query?query={}", encode(promql)));
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// Queries `promql` until it returns `n` series (bounded at 60 s), and returns them.
    pub fn wait_for(&self, promql: &str, n: usize) -> Vec<Value> {
        self.wait_until(promql, &format!("{n} series"), |r| r.len() == n)
    }

    /// Queries `promql` until it returns some series (bounded at 60 s), and returns them.
    pub fn wait_some(&self, promql: &str) -> Vec<Value> {
        self.wait_until(promql, "any series", |r| !r.is_empty())
    }

    fn wait_until(&self, promql: &str, want: &str, ok: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let result = self.query(promql);
            if ok(&result) {
                return result;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{promql} gave {result:?}, not {want}, in 60 s; targets: {}; log: {}",
                self.api("targets"),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free port on 127.0.0.1, inside `netns` when given.
fn free_loopback_port(netns: Option<&str>) -> SocketAddr {
    let bind = || TcpListener::bind("127.0.0.1:0")?.local_addr();
    match netns {
        Some(ns) => fathom_lab::netns::run_in(ns, bind).unwrap(),
        None => bind().unwrap(),
    }
}

/// A Prometheus config scraping `targets` every second.
fn config_text(targets: &[(&str, SocketAddr)]) -> String {
    let mut text = String::from(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: fathom\n    static_configs:\n",
    );
    for (host, addr) in targets {
        text.push_str(&format!(
            "      - targets: ['{addr}']\n        labels: {{host: '{host}'}}\n"
        ));
    }
    text
}

/// `s` percent-encoded for a URL's query.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A registry with a series in every family: h1 samples h2 (pair series) and tests h3 too
/// (aggregates only); the agent's counts watched.
pub fn fed() -> std::sync::Arc<fathom_metrics::MeshMetrics> {
    use fathom_metrics::{AgentCounts, MeshMetrics, Outcome};
    let m = MeshMetrics::new(1);
    m.watch_agent(AgentCounts::default());
    m.set_peers("h1", &["h2".to_string()]);
    for peer in ["h2", "h3"] {
        m.rr("h1", peer, "rr", &[(40e-6, 90), (0.0012, 10)]);
        m.datagrams("h1", peer, "udp", 1000, 980);
        m.throughput("h1", peer, "stream", 9.4e9, 1_700_000_000.0);
        m.alert("h1", peer, "rr", true);
    }
    for outcome in [Outcome::Run, Outcome::Skipped, Outcome::Failed] {
        m.outcome("h1", "stream", outcome);
    }
    m.scheduler_lag("h1", 0.004);
    m.stored("h1", 1_700_000_001.0);
    std::sync::Arc::new(m)
}

/// Serves `metrics` on a free loopback port for the rest of the test process: its address.
pub fn serve_here(metrics: std::sync::Arc<fathom_metrics::MeshMetrics>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    fathom_metrics::serve(listener, metrics, stop).unwrap();
    addr
}

/// The names of the samples `fed()` exports (`…_bucket`, `…_total` and the like), the names a
/// PromQL expression reads.
pub fn exported_samples() -> std::collections::BTreeSet<String> {
    fed()
        .encode()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

/// The metric names `promql` reads: its words that start with `fathom_` (a recording rule's
/// name, with its colons, is not one).
pub fn metrics_read(promql: &str) -> Vec<String> {
    promql
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| w.starts_with("fathom_") && !w.contains(':'))
        .map(str::to_string)
        .collect()
}

/// The dashboard's PromQL: every panel's expressions and the template variables' queries.
pub fn dashboard_queries() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/grafana/fathom-mesh.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut found = Vec::new();
    collect_queries(&doc, &mut found);
    found
}

fn collect_queries(v: &Value, found: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (key, value) in map {
                match value {
                    Value::String(s) if key == "expr" || key == "definition" => {
                        found.push(s.clone())
                    }
                    _ => collect_queries(value, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_queries(i, found)),
        _ => {}
    }
}
