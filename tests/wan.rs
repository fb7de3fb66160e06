//! The real fathom binary across the lab's WAN emulator (needs root; without it each test prints
//! SKIP and passes): `fathom lab up --hosts 2 --wan …` makes h1 – emulator – h2, and fathom's
//! own tests and OpenSSH's scp run across it from inside h1 with `fathom lab exec`.
//!
//! Each test makes its own lab (named with the pid), removes it through a guard even when it
//! fails, bounds every command, and takes a lock so that no two labs measure at once.

mod common;
use common::run_program as run;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const FATHOM: &str = env!("CARGO_BIN_EXE_fathom");

/// h2's address in a `--hosts 2` lab.
const H2: &str = "10.77.0.2";

/// One lab at a time: round trips and rates are measured, and the machine is small.
static ONE_LAB: Mutex<()> = Mutex::new(());

/// True when running as root; otherwise says on stderr that `test` is skipped.
fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("SKIP {test}: needs root to create network namespaces");
    }
    root
}

/// Runs `fathom ARGS` (bounded), panicking with its stderr unless it exits 0; returns stdout.
fn fathom_ok(args: &[&str], secs: u64) -> String {
    let out = run(FATHOM, args, secs);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        out.status.success(),
        "fathom {args:?}: {}{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    text(&out.stdout)
}

/// A lab made with `fathom lab up`; `fathom lab down` when dropped, panics included.
struct TestLab {
    name: String,
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl TestLab {
    /// `fathom lab up --hosts 2 --wan WAN` under a name unique to this process and `tag`.
    fn up(tag: &str, wan: &str) -> TestLab {
        let lock = ONE_LAB
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let lab = TestLab {
            name: format!("tw{}-{tag}", std::process::id()),
            _one_at_a_time: lock,
        };
        let out = fathom_ok(
            &[
                "lab", "up", "--name", &lab.name, "--hosts", "2", "--wan", wan,
            ],
            60,
        );
        assert!(out.contains("WAN link h1-h2"), "{out}");
        lab
    }

    fn key_file(&self) -> String {
        format!("/run/fathom/lab/{}/key", self.name)
    }

    /// Changes the WAN link in both directions.
    fn set_wan(&self, params: &str) {
        fathom_ok(
            &["lab", "wan", "set", "--name", &self.name, "h1-h2", params],
            30,
        );
    }

    /// `fathom lab exec h1 -- PROGRAM ARGS`, bounded.
    fn exec_h1(&self, program: &str, args: &[&str], secs: u64) -> Output {
        let mut all = vec!["lab", "exec", "--name", &self.name, "h1", "--", program];
        all.extend_from_slice(args);
        run(FATHOM, &all, secs)
    }

    /// Runs a fathom test from h1 against h2's agent and returns its JSON document.
    fn fathom_from_h1(&self, args: &[&str], secs: u64) -> serde_json::Value {
        let key = self.key_file();
        let mut all = args.to_vec();
        all.extend_from_slice(&[H2, "--key-file", &key, "--json"]);
        let out = self.exec_h1(FATHOM, &all, secs);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "fathom {args:?}: not one JSON document ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert!(doc["error"].is_null(), "fathom {args:?}: {}", doc["error"]);
        doc
    }

    /// `fathom lab status --json`.
    fn status(&self) -> serde_json::Value {
        let out = fathom_ok(&["lab", "status", "--name", &self.name, "--json"], 30);
        serde_json::from_str(&out).unwrap()
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let out = run(FATHOM, &["lab", "down", "--name", &self.name], 60);
        if !out.status.success() {
            eprintln!(
                "cleanup of lab {}: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn rr_latency_across_the_emulator_is_the_configured_rtt() {
    if !root_or_skip("rr_latency_across_the_emulator_is_the_configured_rtt") {
        return;
    }
    let lab = TestLab::up("rr", "delay=5ms");
    for one_way_ms in [5.0, 25.0, 100.0] {
        lab.set_wan(&format!("delay={one_way_ms}ms"));
        let doc = lab.fathom_from_h1(&["rr", "-t", "2"], 60);
        let min_ms = doc["summary"]["rr"]["latency_us"]["min"].as_f64().unwrap() / 1000.0;
        let rtt = 2.0 * one_way_ms;
        assert!(
            min_ms >= rtt && min_ms <= rtt + 0.5,
            "{one_way_ms} ms one way: rr min latency {min_ms:.3} ms, expected {rtt} ms (+0.5)"
        );
    }
    let wan = &lab.status()["wan"][0];
    assert_eq!(wan["forwarder"]["alive"], true);
    assert!(wan["counters"]["a_to_b"]["forwarded"].as_u64().unwrap() > 10);
}

#[test]
fn a_window_limited_stream_stays_below_window_over_rtt() {
    if !root_or_skip("a_window_limited_stream_stays_below_window_over_rtt") {
        return;
    }
    let lab = TestLab::up("win", "delay=10ms");
    let rtt_s = 0.020;
    let doc = lab.fathom_from_h1(&["stream", "-t", "3", "--omit", "1", "--rcvbuf", "64K"], 60);
    let summary = &doc["summary"];
    let bps = summary["bits_per_second"].as_f64().unwrap();
    let window = summary["buffers"]["effective_recv"].as_f64().unwrap();
    assert!(window >= 65536.0, "the kernel grants at least the request");
    assert_eq!(doc["flows"][0]["rcvbuf"].as_f64().unwrap(), window);
    // The receiver advertises at most its buffer, so a flow cannot beat buffer / RTT; twice
    // that bound leaves room for the kernel's accounting and keeps this a sanity check.
    let bound = 2.0 * 8.0 * window / rtt_s;
    assert!(
        bps > 0.0 && bps < bound,
        "{bps:.0} bit/s across a 20 ms RTT with a {window} B buffer (bound {bound:.0})"
    );
    let counters = &lab.status()["wan"][0]["counters"];
    let forwarded = counters["a_to_b"]["forwarded"].as_u64().unwrap();
    assert!(
        forwarded > 1000,
        "the stream crossed the emulator: {counters}"
    );
}

/// An sshd inside h2 of a lab, on its own port with a fresh host key and an authorized key,
/// everything in a temporary directory; killed (by its pid) when dropped.
struct Sshd {
    child: Child,
    netns: String,
    dir: tempfile::TempDir,
}

const SSH_PORT: &str = "2222";

impl Sshd {
    fn start(lab: &TestLab) -> Sshd {
        let sshd = ["/usr/sbin/sshd", "/usr/bin/ssh-keygen", "/usr/bin/scp"];
        for program in sshd {
            assert!(
                Path::new(program).exists(),
                "{program} is missing: run scripts/install-test-deps.sh (openssh-server, openssh-client)"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
        for key in ["host_key", "user_key"] {
            let out = run(
                "ssh-keygen",
                &["-q", "-t", "ed25519", "-N", "", "-f", &path(key)],
                30,
            );
            assert!(out.status.success(), "ssh-keygen failed");
        }
        std::fs::copy(path("user_key.pub"), path("authorized_keys")).unwrap();
        let config = format!(
            "Port {SSH_PORT}\nListenAddress {H2}\nHostKey {}\nAuthorizedKeysFile {}\n\
             PidFile none\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             Subsystem sftp internal-sftp\n",
            path("host_key"),
            path("authorized_keys")
        );
        std::fs::write(path("sshd_config"), config).unwrap();
        // sshd refuses to start without its privilege separation directory.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let log = std::fs::File::create(path("sshd.log")).unwrap();
        let netns = format!("fl-{}-h2", lab.name);
        let child = Command::new("ip")
            .args(["netns", "exec", &netns, "/usr/sbin/sshd", "-D", "-e"])
            .args(["-f", &path("sshd_config")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let sshd = Sshd { child, netns, dir };
        sshd.wait_listening();
        sshd
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::read_to_string(self.path("sshd.log")).unwrap_or_default();
            if log.contains("Server listening") {
                return;
            }
            assert!(Instant::now() < deadline, "sshd did not start: {log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sshd {
    /// Kills the listener and the session processes it forked: sshd processes in the
    /// namespace of this lab's h2, where nothing else runs sshd (sessions call setsid, so
    /// they are found by namespace, not by process group).
    fn drop(&mut self) {
        let sessions = || -> Vec<u32> {
            fathom_lab::netns::pids_in(&self.netns)
                .into_iter()
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|cmdline| cmdline.starts_with(b"sshd"))
                })
                .collect()
        };
        let listener = self.child.id();
        let others = || sessions().into_iter().filter(|&p| p != listener).count();
        // A session ends a few round trips after its client; the listener reaps it.
        let deadline = Instant::now() + Duration::from_secs(3);
        while others() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for pid in sessions().into_iter().filter(|&p| p != listener) {
            // SAFETY: signals an sshd session this test's sshd forked, by its pid.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn scp_copies_a_file_across_the_emulator() {
    if !root_or_skip("scp_copies_a_file_across_the_emulator") {
        return;
    }
    let lab = TestLab::up("scp", "delay=25ms");
    let sshd = Sshd::start(&lab);
    let mut data = vec![0u8; 4 << 20];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut data))
        .unwrap();
    let (source, target) = (sshd.path("f4m"), sshd.path("f4m.copy"));
    std::fs::write(&source, &data).unwrap();
    let key = sshd.path("user_key");
    let destination = format!("root@{H2}:{}", target.display());
    let started = Instant::now();
    let out = lab.exec_h1(
        "scp",
        &[
            "-q",
            "-P",
            SSH_PORT,
            "-i",
            key.to_str().unwrap(),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            source.to_str().unwrap(),
            &destination,
        ],
        60,
    );
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "scp failed: {}\nsshd: {}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(sshd.path("sshd.log")).unwrap_or_default()
    );
    assert!(std::fs::read(&target).unwrap() == data, "the copy differs");
    // Connection, key exchange, authentication and the copy take several round trips.
    assert!(
        took >= Duration::from_millis(50),
        "scp took {took:?}, under one 50 ms RTT"
    );
    let counters = &lab.status()["wan"][0]["counters"];
    let bytes = counters["a_to_b"]["forwarded_bytes"].as_u64().unwrap();
    assert!(bytes > 4 << 20, "the file crossed the emulator: {counters}");
}

/// `fathom udp ARGS` from the root namespace with h1 as the client and h2 as the server (so the
/// report carries the emulator's counters): its arguments.
fn udp_args<'a>(lab: &'a TestLab, args: &[&'a str]) -> Vec<&'a str> {
    let hosts = [
        "udp",
        "--lab",
        &lab.name,
        "--server",
        "h2",
        "--clients",
        "h1",
    ];
    [&hosts[..], args].concat()
}

/// Runs `fathom udp ARGS --json` as [`udp_args`] says and returns its JSON document.
fn udp_across(lab: &TestLab, args: &[&str], secs: u64) -> serde_json::Value {
    let all = [udp_args(lab, args), vec!["--json"]].concat();
    let doc: serde_json::Value = serde_json::from_str(&fathom_ok(&all, secs)).unwrap();
    assert!(doc["error"].is_null(), "fathom {all:?}: {}", doc["error"]);
    doc
}

/// Makes a lab with `wan` and runs `fathom udp ARGS` across it (see [`udp_across`]); None when
/// `test` is skipped for want of root.
fn udp_lab(
    test: &str,
    tag: &str,
    wan: &str,
    args: &[&str],
) -> Option<(TestLab, serde_json::Value)> {
    if !root_or_skip(test) {
        return None;
    }
    let lab = TestLab::up(tag, wan);
    let doc = udp_across(&lab, args, 90);
    Some((lab, doc))
}

/// One direction's counter delta over the test, from the report's `wan[0]`.
fn wan_delta(doc: &serde_json::Value, dir: &str, field: &str) -> u64 {
    let link = &doc["wan"][0];
    let at = |when: &str| link[when][dir][field].as_u64().unwrap_or(0);
    at("counters_after") - at("counters_before")
}

#[test]
fn udp_loss_agrees_with_the_emulators_drops_and_the_delay_is_its_delay() {
    let Some((_lab, doc)) = udp_lab(
        "udp_loss_agrees_with_the_emulators_drops_and_the_delay_is_its_delay",
        "udploss",
        "loss=1%,delay=2ms",
        &[
            "-n", "20000", "--pps", "20k", "--size", "200", "--buffer", "4M",
        ],
    ) else {
        return;
    };
    let u = &doc["summary"]["udp"];
    let lost = u["lost"].as_u64().unwrap();
    let dropped = wan_delta(&doc, "a_to_b", "dropped_loss");
    // The loss model drops any frame h1 sends; frames other than the datagrams (the control
    // connection, ARP) are the only ones the emulator may have dropped that fathom did not miss.
    let others = wan_delta(&doc, "a_to_b", "received").saturating_sub(20_000);
    assert!(lost > 100, "1% of 20000: {u}");
    assert!(
        lost <= dropped && dropped - lost <= others,
        "fathom lost {lost}, the emulator dropped {dropped} ({others} other frames): {u} {}",
        doc["wan"]
    );
    assert_eq!(u["missing"]["datagrams"].as_u64(), Some(lost), "{u}");
    assert_eq!(
        u["missing"]["path"].as_u64(),
        Some(lost),
        "the emulator's: {u}"
    );
    let d = &u["one_way_delay"];
    assert_eq!(d["clock"].as_str(), Some("estimated"), "{d}");
    let (mean, error) = (
        d["mean_us"].as_f64().unwrap(),
        d["error_us"].as_f64().unwrap(),
    );
    // Never under the emulator's 2 ms (less the offset's error); over it by the path's own
    // time and a loaded machine's wake-ups, generously.
    assert!(
        mean >= 2000.0 - error - 100.0 && mean <= 6000.0 + error,
        "one-way delay {mean} µs ± {error}, the emulator holds 2 ms: {d}"
    );
}

#[test]
fn udp_through_a_100m_link_is_received_at_100m_and_the_excess_is_lost() {
    let Some((lab, doc)) = udp_lab(
        "udp_through_a_100m_link_is_received_at_100m_and_the_excess_is_lost",
        "udprate",
        "rate=100M",
        &[
            "-t", "3", "--size", "1472", "--rate", "150M", "--buffer", "4M",
        ],
    ) else {
        return;
    };
    let u = &doc["summary"]["udp"];
    // The emulator's rate counts whole Ethernet frames: payload + UDP 8 + IPv4 20 + Ethernet 14.
    let wire = u["datagrams_per_second"].as_f64().unwrap() * (1472.0 + 42.0) * 8.0;
    // Within 2% of the link's rate, also on a loaded machine: the emulator's departure times
    // are fixed on arrival, and its thread spins too little to be throttled by the kernel.
    assert!(
        (98e6..=102e6).contains(&wire),
        "received {wire} bit/s on the wire, the link carries 100M: {u} {}",
        doc["wan"]
    );
    let (sent, got) = (
        u["sender_datagrams"].as_u64().unwrap(),
        u["datagrams"].as_u64().unwrap(),
    );
    let lost = u["lost"].as_u64().unwrap();
    assert!(lost * 5 > sent, "a third of 150M is over 100M: {u}");
    // In flight at the window's end: what the sender sent in the last one-way delay (the
    // emulator's queue), whose losses are not yet gaps behind a later arrival; with margin.
    let delay_s = u["one_way_delay"]["mean_us"].as_f64().unwrap() / 1e6;
    let in_flight =
        (u["sender_datagrams_per_second"].as_f64().unwrap() * delay_s * 1.5) as u64 + 100;
    assert!(
        sent.saturating_sub(got).abs_diff(lost) <= in_flight,
        "sent {sent} - received {got} against {lost} lost: {u}"
    );
    let dropped = wan_delta(&doc, "a_to_b", "dropped_queue");
    assert!(
        dropped.abs_diff(lost) <= in_flight,
        "the emulator's queue dropped {dropped}, fathom lost {lost}: {u}"
    );
    let path = u["missing"]["path"].as_u64().unwrap();
    assert!(
        path.abs_diff(lost) <= in_flight,
        "missing on the path {path}, lost {lost}: {u}"
    );
    // GSO cannot fragment: datagrams larger than the path's 1500-byte MTU are refused, clearly.
    let out = run(
        FATHOM,
        &[
            "udp",
            "--lab",
            &lab.name,
            "--server",
            "h2",
            "--clients",
            "h1",
            "--gso",
            "--size",
            "4000",
            "-t",
            "1",
        ],
        60,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--gso: 4000-byte datagrams do not fit one packet"),
        "{err}"
    );
}

#[test]
fn udp_jitter_through_an_emulator_with_2ms_of_jitter_is_of_its_size() {
    let Some((_lab, doc)) = udp_lab(
        "udp_jitter_through_an_emulator_with_2ms_of_jitter_is_of_its_size",
        "udpjit",
        "delay=5ms,jitter=2ms",
        &["-n", "600", "--pps", "200", "--size", "200"],
    ) else {
        return;
    };
    let u = &doc["summary"]["udp"];
    assert_eq!(u["datagrams"].as_u64(), Some(600), "{u}");
    // Each delay is uniform in 5 ms ± 2 ms; 5 ms apart, no datagram waits for the one before
    // it, so successive transit differences |D| average 4/3 ms, which RFC 3550's running
    // estimate (1/16 of each new |D|) follows to within about 0.2 ms. Generous bounds: the
    // sender's pacing and the emulator's wake-ups add a little.
    let jitter = u["jitter_us"].as_f64().unwrap();
    assert!(
        (700.0..=2200.0).contains(&jitter),
        "jitter {jitter} µs through ±2 ms of emulated jitter (about 1333 expected): {u}"
    );
    let delay = u["one_way_delay"]["mean_us"].as_f64().unwrap();
    assert!(
        (4500.0..=9000.0).contains(&delay),
        "one-way delay {delay} µs through 5 ms ± 2 ms: {u}"
    );
}
