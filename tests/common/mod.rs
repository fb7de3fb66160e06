//! Helpers for the integration tests: the real binary, real agents on ephemeral loopback ports.
#![allow(dead_code)]

pub mod control;
#[allow(unused_imports)]
pub use control::*;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::Duration;

/// The results store the tests write to (never the user's own).
pub fn test_store() -> String {
    format!("{}/fathom-tests.db", env!("CARGO_TARGET_TMPDIR"))
}

/// The fathom binary under test, storing its results in [`test_store`].
pub fn fathom() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fathom"));
    c.env("FATHOM_STORE", test_store());
    c
}

/// The words of `line`, split at whitespace: a command line written as it would be typed.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs fathom with `args`, bounded to `secs` seconds (killed by its PID after that).
pub fn run(args: &[&str], secs: u64) -> Output {
    run_program(env!("CARGO_BIN_EXE_fathom"), args, secs)
}

/// Runs fathom with `args` (bounded) and asserts that it succeeded, its stderr in the message.
pub fn run_ok(args: &[&str], secs: u64) -> Output {
    let out = run(args, secs);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// Runs fathom with `args` (bounded), asserts that it succeeded, and parses its one JSON
/// document.
pub fn run_json(args: &[&str], secs: u64) -> serde_json::Value {
    json(&run_ok(args, secs))
}

/// Runs fathom with `args` (bounded) and asserts that it exited with `code`; returns its
/// stderr.
pub fn run_exit(args: &[&str], secs: u64, code: i32) -> String {
    let out = run(args, secs);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    err
}

/// Runs fathom with `args` (bounded) and asserts that it exited with `code` and that its stderr
/// says `text`; returns that stderr.
pub fn run_exit_says(args: &[&str], secs: u64, code: i32, text: &str) -> String {
    let err = run_exit(args, secs, code);
    assert!(err.contains(text), "{args:?}: expected '{text}' in: {err}");
    err
}

/// Runs `fathom study NAME --quick --json ARGS` (bounded) into a new temporary directory (its
/// files in `out`, its store `s.db`) and asserts that it succeeded: that directory, the `out`
/// folder and the study's JSON document.
pub fn quick_study(
    name: &str,
    args: &[&str],
    secs: u64,
) -> (tempfile::TempDir, std::path::PathBuf, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let store = dir.path().join("s.db");
    let files = ["-o", out_dir.to_str().unwrap()];
    let store = ["--store", store.to_str().unwrap()];
    let all = [
        &["study", name, "--quick", "--json"][..],
        args,
        &files,
        &store,
    ]
    .concat();
    let out = run(&all, secs);
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    let doc = json(&out);
    (dir, out_dir, doc)
}

/// Runs `fathom lab ARGS` (bounded); returns the exit code, stdout and stderr.
pub fn lab(args: &[&str]) -> (i32, String, String) {
    let out = run(&[&["lab"][..], args].concat(), 120);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Runs `program args`, bounded to `secs` seconds (killed by its PID after that).
pub fn run_program(program: &str, args: &[&str], secs: u64) -> Output {
    let child = Command::new(program)
        .env("FATHOM_STORE", test_store())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(tx.send(child.wait_with_output())));
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(out) => out.expect("output"),
        Err(_) => {
            // SAFETY: signals the child we spawned, by its PID.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let out = rx.recv().expect("output after kill").expect("output");
            panic!(
                "{program} {args:?} did not finish in {secs} s; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Runs the repository's checking script `scripts/NAME` with python3, bounded to `secs`
/// seconds: whether it passed, and what it said (stdout, then stderr).
pub fn check_script(name: &str, secs: u64) -> (bool, String) {
    let script = format!("{}/scripts/{name}", env!("CARGO_MANIFEST_DIR"));
    let out = run_program("python3", &[&script], secs);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// True when running as root (what the lab needs). Without root a test skips, saying so, except
/// under CI=true, where CI runs as root and a skip would hide a failure.
pub fn root_or_ci() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs the lab tests as root"
    );
    eprintln!("SKIP: the lab needs root");
    false
}

/// Parses stdout as exactly one JSON document.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The strings of the JSON array `v`.
pub fn strs(v: &serde_json::Value) -> Vec<&str> {
    let items = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    items
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}

/// The string `key` of each item of the JSON array `v`.
pub fn each_str<'a>(v: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    let items = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    let field = |i: &'a serde_json::Value| i[key].as_str();
    items
        .iter()
        .map(|i| field(i).unwrap_or_else(|| panic!("no string {key} in {i}")))
        .collect()
}

/// The item of the JSON array `v` whose `key` is `value`.
pub fn item<'a>(v: &'a serde_json::Value, key: &str, value: &str) -> &'a serde_json::Value {
    let items = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    items
        .iter()
        .find(|i| i[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value} in {v}"))
}

/// `doc`'s `advice_check`, asserting that it re-ran the test for `finding` with `change`.
pub fn rerun_check<'a>(
    doc: &'a serde_json::Value,
    finding: &str,
    change: &str,
) -> &'a serde_json::Value {
    let c = &doc["advice_check"];
    assert_eq!(c["finding"], finding, "{c:#}");
    assert_eq!(c["outcome"], "rerun", "{c:#}");
    assert_eq!(c["change"], change, "{c:#}");
    c
}

/// Asserts that `doc` validates against docs/schema/result.schema.json (`what` names the case).
pub fn assert_valid(doc: &serde_json::Value, what: &str) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../docs/schema/result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

/// Asserts that `doc` validates against docs/schema/doctor.schema.json.
pub fn assert_doctor_valid(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../docs/schema/doctor.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// The arguments `KIND --server SERVER --clients CLIENTS ARGS --json`, `kind_args` being KIND
/// then ARGS: a test across several hosts.
pub fn across<'a>(server: &'a str, clients: &'a str, kind_args: &[&'a str]) -> Vec<&'a str> {
    let (kind, args) = kind_args.split_first().expect("a kind");
    let hosts = [*kind, "--server", server, "--clients", clients];
    [&hosts[..], args, &["--json"]].concat()
}

/// Runs fathom with `args`, calls `kill` 2.5 s in (to end one of the test's hosts), and returns
/// its output, asserting that it ended within 15 s of the loss and exited 1.
pub fn run_and_lose_a_host(args: &[&str], kill: impl FnOnce()) -> Output {
    let child = fathom()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fathom");
    std::thread::sleep(Duration::from_millis(2500));
    kill();
    let lost = std::time::Instant::now();
    let out = child.wait_with_output().expect("output");
    assert!(
        lost.elapsed().as_secs() < 15,
        "the test ends soon after the loss"
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    out
}

/// Asserts that `out`'s stderr says `text` (all of stderr in the message).
pub fn assert_says(out: &Output, text: &str) {
    let err = stderr(out);
    assert!(err.contains(text), "{err}");
}

/// Asserts that `out` exited with `code` and that its stderr says `text`.
pub fn assert_exit(out: &Output, code: i32, text: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
    assert_says(out, text);
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `n` agents with no flags, and their targets (`127.0.0.1:PORT`).
pub fn agents(n: usize) -> (Vec<Agent>, Vec<String>) {
    let agents: Vec<Agent> = (0..n).map(|_| Agent::start(&[])).collect();
    let targets = agents.iter().map(Agent::target).collect();
    (agents, targets)
}

/// The count `v` holds.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A `fathom serve` child on an ephemeral loopback port, killed (by its PID) when dropped.
pub struct Agent {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: BufReader<ChildStderr>,
}

impl Agent {
    /// Starts an agent with extra `args`.
    pub fn start(args: &[&str]) -> Agent {
        Agent::start_with(fathom(), args)
    }

    /// Starts an agent from `cmd` (the fathom binary, set up by the caller) with extra `args`.
    pub fn start_with(cmd: Command, args: &[&str]) -> Agent {
        Agent::listening(cmd, "127.0.0.1:0", args)
    }

    /// Starts an agent from `cmd` listening on `listen` (an address its namespace has), with
    /// extra `args`.
    pub fn listening(mut cmd: Command, listen: &str, args: &[&str]) -> Agent {
        let mut child = cmd
            .args(["serve", "--listen", listen])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agent");
        let mut log = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        log.read_line(&mut line).expect("agent's first line");
        let addr = line
            .split_whitespace()
            .find_map(|w| w.parse::<SocketAddr>().ok())
            .unwrap_or_else(|| panic!("no address in the agent's first line: {line}"));
        Agent { child, addr, log }
    }

    /// `127.0.0.1:PORT` as a string.
    pub fn target(&self) -> String {
        self.addr.to_string()
    }

    /// The next line of the agent's log.
    pub fn next_log_line(&mut self) -> String {
        let mut line = String::new();
        self.log.read_line(&mut line).expect("agent log");
        line
    }

    /// CPU time the agent process has used so far, in clock ticks (user + system).
    pub fn cpu_ticks(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        field(11) + field(12)
    }

    /// Threads of the agent process now.
    pub fn threads(&self) -> usize {
        self.status("Threads:").unwrap_or(0) as usize
    }

    /// The agent's resident memory now, in KiB.
    pub fn rss_kb(&self) -> u64 {
        self.status("VmRSS:").unwrap_or(0)
    }

    /// A number from the agent's /proc status, by its label.
    fn status(&self, label: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find_map(|l| l.strip_prefix(label))?;
        line.trim().trim_end_matches("kB").trim().parse().ok()
    }

    /// Descriptors the agent holds open now.
    pub fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).map_or(0, |d| d.count())
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
