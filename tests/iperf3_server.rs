//! `fathom serve --iperf3` against the real iperf3 client (Debian's 3.12): the client's figures
//! are fathom's counts, byte counts are exact with `-n`, UDP lost/total are consistent, and a
//! busy server, an unsupported option, garbage and oversized or stalled control messages get
//! iperf3's errors or are cut off, leaving the agent's threads and descriptors at idle.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// A `fathom serve --iperf3=0` child, its iperf3 address and its log lines; killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: Receiver<String>,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&[])
    }

    /// Starts the agent with `extra` serve options.
    fn start_with(extra: &[&str]) -> Server {
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
    fn line_with(&mut self, what: &str) -> String {
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
    fn fathom_end(&mut self) -> (u64, u64) {
        let line = self.line_with("fathom sent");
        let after = |key: &str| -> u64 {
            let rest = &line[line.find(key).expect(key) + key.len()..];
            rest.split_whitespace().next().unwrap().parse().unwrap()
        };
        (after("fathom sent "), after("received "))
    }

    /// Runs `iperf3 -c` against this server with `args` (bounded), returning (exit code, output).
    fn client(&self, args: &[&str]) -> (i32, String) {
        self.client_env(args, &[])
    }

    /// Runs `iperf3 -c` with `args` and environment variables `env`.
    fn client_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
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
    fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("-J");
        let (code, text) = self.client(&a);
        assert_eq!(code, 0, "iperf3 {args:?} failed: {text}");
        let v: Value = serde_json::from_str(&text).expect("iperf3's JSON");
        v["end"].clone()
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn tcp_forward_receiver_figures_are_fathoms() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1"]);
    let (sent, received) = s.fathom_end();
    assert_eq!(sent, 0);
    assert!(received > 0);
    assert_eq!(n(&end["sum_received"]["bytes"]), received);
    assert!(n(&end["sum_sent"]["bytes"]) >= received);
}

#[test]
fn tcp_reverse_sender_figures_are_fathoms() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1", "-R"]);
    let (sent, received) = s.fathom_end();
    assert_eq!(received, 0);
    assert_eq!(n(&end["sum_sent"]["bytes"]), sent);
    assert!(n(&end["sum_received"]["bytes"]) > 0);
}

#[test]
fn four_streams_each_counted() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1", "-P", "4"]);
    let (_, received) = s.fathom_end();
    let streams = end["streams"].as_array().expect("streams");
    assert_eq!(streams.len(), 4);
    let per: u64 = streams.iter().map(|x| n(&x["receiver"]["bytes"])).sum();
    assert_eq!(per, received);
    assert_eq!(n(&end["sum_received"]["bytes"]), received);
}

#[test]
fn bidir_runs_both_ways() {
    let mut s = Server::start();
    let end = s.json(&["-t", "1", "--bidir"]);
    let (sent, received) = s.fathom_end();
    assert!(sent > 0 && received > 0);
    assert_eq!(n(&end["sum_received"]["bytes"]), received);
    assert_eq!(n(&end["sum_sent_bidir_reverse"]["bytes"]), sent);
}

#[test]
fn byte_counts_are_exact_both_ways() {
    let s = Server::start();
    for args in [&["-n", "10M"][..], &["-n", "10M", "-R", "-P", "3"][..]] {
        let end = s.json(args);
        assert_eq!(n(&end["sum_sent"]["bytes"]), 10_485_760, "{args:?}");
        assert_eq!(n(&end["sum_received"]["bytes"]), 10_485_760, "{args:?}");
    }
}

#[test]
fn udp_lost_and_total_agree_with_the_datagrams() {
    let mut s = Server::start();
    let end = s.json(&["-u", "-b", "100M", "-l", "1400", "-t", "1"]);
    let (_, received) = s.fathom_end();
    let line = s.line_with("datagrams");
    let (r, sent) = (&end["sum_received"], &end["sum_sent"]);
    let total = n(&r["packets"]);
    let lost = n(&r["lost_packets"]);
    assert_eq!(n(&r["bytes"]), received);
    assert_eq!(received % 1400, 0);
    assert_eq!(received / 1400 + lost, total, "{end}");
    assert!(total <= n(&sent["packets"]) && total > 0);
    assert!(
        line.contains(&format!("{total} datagrams, {lost} lost")),
        "{line}"
    );
}

#[test]
fn a_second_client_is_told_the_server_is_busy() {
    let s = Server::start();
    let port = s.addr.port().to_string();
    let mut first = Command::new("timeout")
        .args(["30", "iperf3", "-c", "127.0.0.1", "-p", &port, "-t", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3");
    std::thread::sleep(Duration::from_millis(1500));
    let (code, text) = s.client(&["-t", "1"]);
    let _ = first.wait();
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("the server is busy running a test"), "{text}");
}

#[test]
fn an_unsupported_option_gets_iperf3s_error() {
    let s = Server::start();
    let started = Instant::now();
    let (code, text) = s.client(&["--sctp", "-t", "1"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no SCTP support available"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Connects to the iperf3 port with a 10 s read deadline.
fn connect(s: &Server) -> TcpStream {
    let c = TcpStream::connect(s.addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    c
}

/// Reads until the peer closes (or resets); panics if it stays open past the read deadline.
fn closed(mut c: TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    match c.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the server kept the connection: {e}"),
    }
    got
}

#[test]
fn garbage_is_cut_off_and_the_server_goes_on() {
    let mut s = Server::start();
    let mut c = connect(&s);
    let _ = c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\x7f garbage garbage");
    closed(c);
    let end = s.json(&["-t", "1"]);
    assert_eq!(n(&end["sum_received"]["bytes"]), s.fathom_end().1);
}

#[test]
fn an_oversized_json_length_is_refused() {
    let s = Server::start();
    let mut c = connect(&s);
    c.write_all(b"abcdefghijklmnopqrstuvwxyz2345672345\0")
        .unwrap();
    let mut state = [0u8; 1];
    c.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 9, "PARAM_EXCHANGE");
    c.write_all(&0x7fff_ffffu32.to_be_bytes()).unwrap();
    assert_eq!(closed(c), recv_params_refused());
}

/// SERVER_ERROR, i_errno 114 ("unable to receive parameters from client"), errno 0.
fn recv_params_refused() -> Vec<u8> {
    let mut want = vec![0xfe];
    want.extend_from_slice(&114i32.to_be_bytes());
    want.extend_from_slice(&0i32.to_be_bytes());
    want
}

fn proc_count(pid: u32, what: &str) -> usize {
    match what {
        "fds" => std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count()),
        _ => std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()),
    }
}

#[test]
fn half_open_and_stalled_connections_leave_the_agent_idle() {
    let s = Server::start();
    let pid = s.pid();
    // Idle is measured after one test, once what the agent opens lazily is open.
    assert_eq!(s.client(&["-t", "1"]).0, 0);
    std::thread::sleep(Duration::from_millis(500));
    let (fds0, threads0) = (proc_count(pid, "fds"), proc_count(pid, "threads"));
    let mut stalled = connect(&s);
    stalled
        .write_all(b"abcdefghijklmnopqrstuvwxyz2345672345\0")
        .unwrap();
    for _ in 0..4 {
        let batch: Vec<TcpStream> = (0..250)
            .filter_map(|_| TcpStream::connect(s.addr).ok())
            .collect();
        assert!(batch.len() > 200);
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut state = [0u8; 1];
    stalled.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 9);
    assert_eq!(
        closed(stalled),
        recv_params_refused(),
        "a stalled exchange is cut off"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while (proc_count(pid, "fds"), proc_count(pid, "threads")) != (fds0, threads0) {
        assert!(
            Instant::now() < deadline,
            "fds {} (idle {fds0}), threads {} (idle {threads0})",
            proc_count(pid, "fds"),
            proc_count(pid, "threads")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, text) = s.client(&["-t", "1"]);
    assert_eq!(code, 0, "{text}");
}

/// An RSA key pair made by openssl and a users file admitting alice (password "secret"), in a
/// temporary directory.
struct Rsa {
    _dir: tempfile::TempDir,
    private: String,
    public: String,
    users: String,
}

impl Rsa {
    fn new() -> Rsa {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = |f: &str| dir.path().join(f).display().to_string();
        let (private, public, users) = (path("priv.pem"), path("pub.pem"), path("users.csv"));
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        };
        run(&["genrsa", "-out", &private, "2048"]);
        run(&["rsa", "-in", &private, "-pubout", "-out", &public]);
        let hash = fathom::iperf3::password_hash("alice", "secret");
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        std::fs::write(&users, format!("# iperf3 users\nalice,{hex}\n")).unwrap();
        Rsa {
            _dir: dir,
            private,
            public,
            users,
        }
    }

    /// An agent requiring these credentials, with `extra` serve options.
    fn serve(&self, extra: &[&str]) -> Server {
        let mut args = vec![
            "--rsa-private-key-path",
            &self.private,
            "--authorized-users-path",
            &self.users,
        ];
        args.extend(extra);
        Server::start_with(&args)
    }
}

/// Runs a 1 s test as `user` with `password`, returning (exit code, output).
fn as_user(s: &Server, public: &str, user: &str, password: &str) -> (i32, String) {
    let args = [
        "-t",
        "1",
        "--username",
        user,
        "--rsa-public-key-path",
        public,
    ];
    s.client_env(&args, &[("IPERF3_PASSWORD", password)])
}

/// Asserts iperf3's own refusal, before any stream connected.
fn refused(r: (i32, String)) {
    let (code, text) = r;
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("test authorization failed"), "{text}");
    assert!(!text.contains("connected to"), "a stream opened: {text}");
}

#[test]
fn rsa_authentication_admits_the_right_password_only() {
    let k = Rsa::new();
    let public = &k.public;
    let mut s = k.serve(&[]);
    let (code, text) = as_user(&s, public, "alice", "secret");
    assert_eq!(code, 0, "{text}");
    s.line_with("authenticated as \"alice\"");
    refused(as_user(&s, public, "alice", "wrong"));
    s.line_with("unknown user or wrong password");
    refused(as_user(&s, public, "bob", "secret"));
    s.line_with("unknown user or wrong password");
    refused(s.client(&["-t", "1"]));
    s.line_with("no authentication token");
    let (code, text) = as_user(&s, public, "alice", "secret");
    assert_eq!(code, 0, "{text}");
}

#[test]
fn rsa_authentication_refuses_a_stale_timestamp() {
    let k = Rsa::new();
    let public = &k.public;
    // The agent's clock an hour ahead: the client's credentials are an hour old.
    let mut s = k.serve(&["--test-clock-shift", "1h"]);
    refused(as_user(&s, public, "alice", "secret"));
    s.line_with("s off");
    drop(s);
    let s = k.serve(&["--test-clock-shift", "1h", "--time-skew-threshold", "3700"]);
    let (code, text) = as_user(&s, public, "alice", "secret");
    assert_eq!(code, 0, "{text}");
}

#[test]
fn rsa_options_are_checked_before_serving() {
    let k = Rsa::new();
    let (private, users) = (&k.private, &k.users);
    let serve = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_fathom"))
            .args(["serve", "--listen", "127.0.0.1:0", "--iperf3=0"])
            .args(extra)
            .output()
            .expect("fathom serve");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = serve(&[
        "--rsa-private-key-path",
        users,
        "--authorized-users-path",
        users,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not an unencrypted RSA private key"), "{err}");
    let (code, err) = serve(&[
        "--rsa-private-key-path",
        private,
        "--authorized-users-path",
        private,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expected USER,SHA256-HEX"), "{err}");
    let (code, err) = serve(&["--rsa-private-key-path", private]);
    assert_eq!(code, Some(2), "{err}");
}
