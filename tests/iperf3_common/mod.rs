//! The helpers of the iperf3 tests (`tests/iperf3_server.rs`, `iperf3_auth.rs`,
//! `iperf3_client.rs`, `iperf3_cli.rs`): the agent as a child process on an ephemeral loopback
//! port, its log lines, the client, and any child started and waited for by a line it prints,
//! each bounded in time.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// A `fathom serve --iperf3=0` child, its iperf3 address and its log lines; killed on drop.
pub struct Server {
    child: Child,
    /// Its iperf3 address.
    pub addr: SocketAddr,
    log: Receiver<String>,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// Starts the agent with `extra` serve options.
    pub fn start_with(extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fathom"))
            .args(["serve", "--listen", "127.0.0.1:0", "--iperf3=0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fathom serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, log) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Server {
            child,
            addr: "127.0.0.1:1".parse().unwrap(),
            log,
        };
        let line = s.line_with("iperf3 clients on");
        s.addr = line
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line}"));
        s
    }

    /// The next log line holding `what` (within 20 s).
    pub fn line_with(&mut self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .log
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no log line with {what:?}"));
            if line.contains(what) {
                return line;
            }
        }
    }

    /// fathom's (sent, received) bytes from the log line of the next finished test.
    pub fn fathom_end(&mut self) -> (u64, u64) {
        let line = self.line_with("fathom sent");
        let after = |key: &str| -> u64 {
            let rest = &line[line.find(key).expect(key) + key.len()..];
            rest.split_whitespace().next().unwrap().parse().unwrap()
        };
        (after("fathom sent "), after("received "))
    }

    /// Runs `iperf3 -c` against this server with `args` (bounded), returning (exit code, output).
    pub fn client(&self, args: &[&str]) -> (i32, String) {
        self.client_env(args, &[])
    }

    /// Runs `iperf3 -c` with `args` and environment variables `env`.
    pub fn client_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let port = self.addr.port().to_string();
        let out = Command::new("timeout")
            .args(["60", "iperf3", "-c", "127.0.0.1", "-p", &port])
            .args(args)
            .envs(env.iter().copied())
            .output()
            .expect("run iperf3 (scripts/install-test-deps.sh installs it)");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), text)
    }

    /// Runs the client with `-J` and returns its `end` member, asserting success.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("-J");
        let (code, text) = self.client(&a);
        assert_eq!(code, 0, "iperf3 {args:?} failed: {text}");
        let v: Value = serde_json::from_str(&text).expect("iperf3's JSON");
        v["end"].clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON count.
pub fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Asserts that the stored run's iperf3 CPU figures (`cpu.local/remote.iperf3`) are the
/// `cpu_util_*` numbers the peer sent, as `sent(name)` gives them ("total", "user", "system").
pub fn assert_peer_cpu(stored: &Value, sent: impl Fn(&str) -> Option<f64>) {
    for key in ["total", "user", "system"] {
        let (got, want) = (stored[key].as_f64(), sent(key));
        let want = want.unwrap_or_else(|| panic!("the peer sent no {key}"));
        let got = got.unwrap_or_else(|| panic!("no {key} stored: {stored}"));
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{key}: stored {got}, sent {want}"
        );
    }
}

/// Asserts that the stored run `run` read this host's CPU on `side` ("local" or "remote"): the
/// host-wide busy share there and in `hosts[0]`, and the service demand, are above 0, and that
/// side carries no iperf3 figures.
pub fn assert_host_cpu(run: &Value, side: &str) {
    let cpu = &run["summary"]["cpu"][side];
    assert!(cpu["total"].as_f64().unwrap() > 0.0, "{cpu}");
    assert!(cpu.get("iperf3").is_none(), "{cpu}");
    assert!(run["hosts"][0]["cpu"]["total"].as_f64().unwrap() > 0.0);
    let sd = &run["summary"]["service_demand_us_per_kb"][side];
    assert!(sd.as_f64().unwrap() > 0.0, "{sd}");
}

/// A child process killed (by its PID) when dropped.
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port.
pub fn free_port() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string()
}

/// Starts `cmd` and waits (at most 20 s) for a line of its stdout (its stderr with `stderr`)
/// holding `ready`; returns the child and that line.
pub fn start(mut cmd: Command, stderr: bool, ready: &str) -> (Kill, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn (scripts/install-test-deps.sh installs iperf3)");
    let out: Box<dyn std::io::Read + Send> = if stderr {
        Box::new(child.stderr.take().unwrap())
    } else {
        Box::new(child.stdout.take().unwrap())
    };
    let (tx, rx) = channel();
    let ready = ready.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.contains(&ready) {
                let _ = tx.send(line);
            }
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the server's ready line");
    (Kill(child), line)
}
