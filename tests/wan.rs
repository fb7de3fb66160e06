//! The real fathom binary across the lab's WAN emulator (needs root; without it each test prints
//! SKIP and passes): `fathom lab up --hosts 2 --wan …` makes h1 – emulator – h2, and fathom's
//! own tests and OpenSSH's scp run across it from inside h1 with `fathom lab exec`.
//!
//! Each test makes its own lab (named with the pid), removes it through a guard even when it
//! fails, bounds every command, and takes a lock so that no two labs measure at once.

//!
//! The UDP tests across the emulator are in `tests/wan_udp.rs`; the lab helpers in
//! `tests/wan_common`.

mod common;
mod wan_common;
use common::run_program as run;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use wan_common::*;

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
