//! File copies under attack (issue 21, items 1–5): a source that shrinks during a zero-copy get
//! fails that copy and leaves the agent alive and idle; a Join that cannot make progress stops at
//! `--max-duration`; a second controller cannot reach a copy in progress; two flows carrying the
//! same range cannot commit a short file; a second agent on the same root, in a PID namespace of
//! its own, leaves the first one's copy alone. Agents run as child processes, so that a signal
//! kills the agent, not the test harness.

mod common;
use common::*;
use fathom::agent::fuzz::put_plan;
use fathom_proto::file::SendMode;
use fathom_proto::{Connection, JoinPlan, ToAgent, ToController, MAX_FRAME};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The agent's worker threads now (`fathom-wN`): each one's CPU time so far, clock ticks.
fn workers(agent: &Agent) -> Vec<u64> {
    let dir = format!("/proc/{}/task", agent.child.id());
    let Ok(tasks) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let ticks = |stat: &str| -> u64 {
        let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let f: Vec<u64> = after_name
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0)
    };
    tasks
        .filter_map(|t| {
            let t = t.ok()?.path();
            let comm = std::fs::read_to_string(t.join("comm")).ok()?;
            comm.starts_with("fathom-w")
                .then(|| ticks(&std::fs::read_to_string(t.join("stat")).unwrap_or_default()))
        })
        .collect()
}

/// Waits up to `secs` for `cond`.
fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

/// Waits up to `secs` for `child` to exit; kills it (by its PID) and fails the test if not.
fn exits(child: &mut Child, secs: u64, what: &str) -> ExitStatus {
    if wait_for(secs, || child.try_wait().unwrap().is_some()) {
        return child.wait().unwrap();
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{what} did not end within {secs} s");
}

/// The agent is alive, has no worker left and serves the next copy.
fn alive_and_idle(agent: &mut Agent, root: &Path) {
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the agent died: {:?}",
        agent.child.try_wait()
    );
    assert!(
        wait_for(10, || workers(agent).is_empty()),
        "workers still running: {:?}",
        workers(agent)
    );
    std::fs::write(root.join("small"), b"small").unwrap();
    let dst = root.join("small.back");
    let from = format!("{}:small", agent.target());
    let out = run(
        &["file", "get", &from, dst.to_str().unwrap(), "--no-store"],
        30,
    );
    assert!(out.status.success(), "the next copy: {}", stderr(&out));
}

#[test]
fn a_source_that_shrinks_during_a_zero_copy_get_fails_that_copy_only() {
    for mode in ["--sendfile", "--splice"] {
        let (root, local) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let big = root.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(16 << 30)
            .unwrap();
        let mut agent = Agent::start(&["--files-root", root.path().to_str().unwrap()]);
        let from = format!("{}:big", agent.target());
        let mut get = fathom()
            .args([
                "file",
                "get",
                &from,
                local.path().join("big").to_str().unwrap(),
            ])
            .args([mode, "--io", "4M", "--no-store"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Sending for a while (its worker used CPU, then a second more), far from the end.
        assert!(
            wait_for(30, || workers(&agent).iter().sum::<u64>() >= 5),
            "{mode}: the copy began"
        );
        std::thread::sleep(Duration::from_secs(1));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&big)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let status = exits(&mut get, 60, "the get of a shrinking source");
        let mut err = String::new();
        get.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert_eq!(status.code(), Some(1), "{mode}: {err}");
        assert!(err.contains("ended"), "{mode}: {err}");
        alive_and_idle(&mut agent, root.path());
    }
}

/// A control connection to `addr` past the handshake (no key), with 30 s for each reply.
fn welcomed(addr: SocketAddr) -> Connection<TcpStream> {
    let c = control::welcomed(addr);
    c.get_ref()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    c
}

/// The agent's messages until its end finished or failed: the last one.
fn outcome(c: &mut Connection<TcpStream>) -> ToController {
    loop {
        match c.expect(MAX_FRAME).unwrap() {
            ToController::Snapshot(_) => {}
            last => return last,
        }
    }
}

#[test]
fn a_join_that_cannot_progress_stops_at_max_duration() {
    let root = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(&[
        "--files-root",
        root.path().to_str().unwrap(),
        "--max-duration",
        "3s",
    ]);
    // The "server agent": takes the connection and reads whatever comes.
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
    });
    let mut plan = put_plan("x", 1 << 40, 1 << 20, 1);
    plan.write_size = 1;
    plan.zerocopy = true;
    plan.kind.file_mut().unwrap().send = SendMode::Sendfile;
    let mut c = welcomed(agent.addr);
    c.send(&ToAgent::Join(Box::new(JoinPlan {
        plan,
        flows: vec![0],
        server: "127.0.0.1".parse().unwrap(),
        port,
        udp_ports: Vec::new(),
        cookie: [7; 16],
        cert: None,
    })))
    .unwrap();
    assert!(matches!(
        c.expect(MAX_FRAME).unwrap(),
        ToController::Connected(_)
    ));
    let t0 = fathom_engine::clock::now_ns() + 50_000_000;
    c.send(&ToAgent::Start { t0 }).unwrap();
    let started = Instant::now();
    let last = outcome(&mut c);
    assert!(started.elapsed() < Duration::from_secs(20), "{last:?}");
    alive_and_idle(&mut agent, root.path());
}

#[test]
fn two_flows_with_the_same_range_commit_nothing() {
    let root = tempfile::tempdir().unwrap();
    let agent = Agent::start(&["--files-root", root.path().to_str().unwrap()]);
    let (size, half) = (1u64 << 20, 1u64 << 19);
    let plan = put_plan("big", size, half as u32, 2);
    let mut c = welcomed(agent.addr);
    c.send(&ToAgent::Setup(Box::new(plan.clone()))).unwrap();
    let ToController::Ready { port, cookie, .. } = c.expect(MAX_FRAME).unwrap() else {
        panic!("no data port")
    };
    let server = fathom::connect::ServerData {
        ip: "127.0.0.1".parse().unwrap(),
        port,
        udp_ports: Vec::new(),
        cookie,
        cert: None,
    };
    let fathom_engine::kind::Sockets::Tcp(socks) =
        fathom::connect::connect(&server, &plan, &[0, 1], None).unwrap()
    else {
        panic!("TCP sockets")
    };
    assert!(matches!(
        c.expect(MAX_FRAME).unwrap(),
        ToController::Connected(_)
    ));
    c.send(&ToAgent::Start {
        t0: fathom_engine::clock::now_ns(),
    })
    .unwrap();
    let data = vec![0x5au8; half as usize];
    let digest = twox_hash::XxHash3_64::oneshot(&data).to_le_bytes();
    for (_, sock) in &socks {
        let mut s: TcpStream = sock.try_clone().unwrap().into();
        s.set_nonblocking(false).unwrap();
        for v in [0, half, size] {
            s.write_all(&u64::to_le_bytes(v)).unwrap();
        }
        s.write_all(&data).unwrap();
        s.write_all(&digest).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let last = outcome(&mut c);
    let text = format!("{last:?}");
    assert!(text.contains("overlaps"), "{text}");
    assert!(!root.path().join("big").exists(), "nothing committed");
}

/// Names in `dir` now.
fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// `fathom file put --size SIZE TARGET`, running.
fn put_running(target: &str, size: &str) -> Child {
    fathom()
        .args(["file", "put", "--size", size, target, "--no-store"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The put ends well and its file is whole.
fn put_succeeds(mut put: Child, file: &Path, size: u64) {
    let status = exits(&mut put, 180, "the put");
    let mut err = String::new();
    put.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(std::fs::metadata(file).unwrap().len(), size, "{err}");
}

#[test]
fn a_second_controller_cannot_reach_a_copy_in_progress() {
    let root = tempfile::tempdir().unwrap();
    let agent = Agent::start(&["--files-root", root.path().to_str().unwrap()]);
    let put = put_running(&format!("{}:big", agent.target()), "256M");
    assert!(
        wait_for(30, || !workers(&agent).is_empty()),
        "the put began"
    );
    let seen = names(root.path());
    let attacker = root.path().join("attacker");
    std::fs::write(&attacker, b"attacker data").unwrap();
    let namespace = ".fathom-0123456789abcdef.part".to_string();
    for name in seen.iter().chain([&namespace]) {
        let to = format!("{}:{name}", agent.target());
        let src = attacker.to_str().unwrap();
        let out = run(&["file", "put", src, &to, "--force", "--no-store"], 30);
        if name == &namespace {
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            assert!(stderr(&out).contains("kept for copies in progress"));
        }
    }
    assert!(seen.is_empty(), "the copy in progress has a name: {seen:?}");
    put_succeeds(put, &root.path().join("big"), 256 << 20);
}

#[test]
fn an_agent_in_another_pid_namespace_leaves_a_copy_in_progress_alone() {
    if !root_or_ci() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().to_str().unwrap();
    let first = Agent::start(&["--files-root", dir]);
    let mut put = put_running(&format!("{}:big", first.target()), "256M");
    assert!(
        wait_for(30, || !workers(&first).is_empty()),
        "the put began"
    );
    let mut unshare = std::process::Command::new("unshare");
    unshare.args([
        "--pid",
        "--fork",
        "--kill-child",
        env!("CARGO_BIN_EXE_fathom"),
    ]);
    let second = Agent::start_with(unshare, &["--files-root", dir]);
    // Once it answered a request, its start-up cleanup is over.
    let back = root.path().join("none.back");
    let from = format!("{}:none", second.target());
    let out = run(&["file", "get", &from, back.to_str().unwrap()], 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("No such file"), "{}", stderr(&out));
    assert!(
        put.try_wait().unwrap().is_none(),
        "the put ended before the second agent's cleanup: make it larger"
    );
    put_succeeds(put, &root.path().join("big"), 256 << 20);
}
