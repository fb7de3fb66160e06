//! The agent: isolation, teardown when a controller vanishes, keys and versions.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[test]
fn two_tests_at_once_on_one_agent_both_complete_with_correct_counts() {
    let agent = Agent::start(&[]);
    let target = agent.target();
    let spawn = |n: &str| {
        fathom()
            .args(["stream", &target, "-n", n, "-P", "2", "--json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("40M"), spawn("30M"));
    for (child, want) in [(a, 40u64 << 20), (b, 30 << 20)] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(json(&out)["summary"]["bytes"].as_u64(), Some(want));
    }
}

#[test]
fn a_killed_controller_frees_its_test_within_a_second_and_the_agent_serves_the_next() {
    let mut agent = Agent::start(&[]);
    let idle_threads = agent.threads();
    let mut ctl = fathom()
        .args(["stream", &agent.target(), "-t", "30", "-P", "4", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let running = Instant::now();
    while agent.threads() <= idle_threads + 4 {
        assert!(
            running.elapsed() < Duration::from_secs(10),
            "the test never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    ctl.kill().unwrap();
    let killed = Instant::now();
    let _ = ctl.wait();
    let line = agent.next_log_line();
    assert!(line.contains("test 1"), "{line}");
    while agent.threads() > idle_threads {
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "threads still running: {} > {idle_threads}",
            agent.threads()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run_ok(&["stream", &agent.target(), "-n", "1M", "--json"], 60);
}

#[test]
fn keys_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad) = (dir.path().join("good"), dir.path().join("bad"));
    std::fs::write(&good, "s3cret\n").unwrap();
    std::fs::write(&bad, "guess").unwrap();
    let agent = Agent::start(&["--key-file", good.to_str().unwrap()]);
    let with_key = |key: &std::path::Path| {
        let key = key.to_str().unwrap();
        run(
            &["stream", &agent.target(), "-n", "1M", "--key-file", key],
            60,
        )
    };
    let out = with_key(&good);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = with_key(&bad);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("authentication failed"),
        "{}",
        stderr(&out)
    );
    let out = run(&["stream", &agent.target(), "-n", "1M"], 60);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("requires a key"), "{}", stderr(&out));
}

#[test]
fn serve_refuses_to_listen_beyond_loopback_without_a_key() {
    let out = run(&["serve", "--listen", "0.0.0.0:0"], 10);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--key-file"), "{}", stderr(&out));
}

/// `--cert /dev/zero` and `--key-file /dev/zero` grew the agent by about 1 GB/s: key and
/// certificate files are read only when regular, and only up to a cap.
#[test]
fn serve_refuses_devices_as_key_and_certificate_files() {
    let cert = std::env::temp_dir().join(format!("fathom-cert-{}.pem", std::process::id()));
    std::fs::write(&cert, vec![b'A'; 2 << 20]).unwrap();
    let big = cert.to_str().unwrap();
    for (args, needle) in [
        (
            &["--cert", "/dev/zero", "--key", "/dev/zero"][..],
            "--cert /dev/zero: not a regular file (a character device)",
        ),
        (
            &["--key-file", "/dev/zero"],
            "--key-file /dev/zero: not a regular file (a character device)",
        ),
        (
            &["--cert", big, "--key", big],
            "larger than 1024 KiB; a key or certificate is smaller",
        ),
    ] {
        let out = run(
            &[&["serve", "--listen", "127.0.0.1:0"][..], args].concat(),
            5,
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    std::fs::remove_file(&cert).unwrap();
}

/// A fake agent that answers with another protocol version.
#[test]
fn a_version_mismatch_is_a_clear_error_on_both_sides() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let fake = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut pre = [0u8; 8];
        s.read_exact(&mut pre).unwrap();
        s.write_all(b"FTHM\x03\xe7\x00\x00").unwrap();
    });
    let out = run(&["stream", &addr, "-t", "1"], 30);
    fake.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("version mismatch") && err.contains("v999"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let mut agent = Agent::start(&[]);
    let mut s = TcpStream::connect(agent.addr).unwrap();
    s.write_all(b"FTHM\x03\xe7\x00\x00").unwrap();
    let mut back = [0u8; 8];
    s.read_exact(&mut back).unwrap();
    assert_eq!(&back[..4], b"FTHM");
    let line = agent.next_log_line();
    assert!(
        line.contains("version mismatch") && line.contains("v999"),
        "{line}"
    );
}

#[test]
fn malformed_messages_get_an_error_and_the_agent_keeps_serving() {
    let mut agent = Agent::start(&[]);
    for garbage in [
        &b"\x00\x00\x00\x05hello"[..],
        b"\xff\xff\xff\xff",
        b"HTTP/1.1 200 OK\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(agent.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        if garbage.starts_with(b"HTTP") {
            s.write_all(garbage).unwrap();
        } else {
            s.write_all(b"FTHM\x00\x01\x00\x00").unwrap();
            s.write_all(garbage).unwrap();
        }
        let mut all = Vec::new();
        let _ = s.read_to_end(&mut all);
        let line = agent.next_log_line();
        assert!(line.contains("refused"), "{line}");
    }
    run_ok(&["stream", &agent.target(), "-n", "1M", "--json"], 60);
}
