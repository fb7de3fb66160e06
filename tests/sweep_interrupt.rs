//! Ctrl-C during a sweep, with the real binary and SIGINT: the first lets the running test
//! finish and stops the sweep after it (saying so), a second aborts the running test at once.

mod common;

use common::{fathom, json, run};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A sweep of three 3-second points on the in-process agent, stored in `store`, with its
/// stderr lines sent to the receiver as they come.
fn start_sweep(store: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = fathom()
        .args([
            "sweep",
            "stream",
            "-t",
            "3s",
            "-i",
            "0.5s",
            "--vary",
            "write=64K,128K,256K",
            "--store",
            store,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let log = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in log.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Reads lines until one starts with `start`; returns every line read.
fn until(rx: &mpsc::Receiver<String>, start: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(l) if l.starts_with(start) => return seen,
            Ok(l) => seen.push(l),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    panic!("no line starting '{start}': {seen:?}");
}

/// The child's exit code (killed by its PID after a minute) and the rest of its stderr.
fn finish(mut child: Child, rx: &mpsc::Receiver<String>) -> (Option<i32>, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the sweep did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(200));
    (status.code(), rx.try_iter().collect::<Vec<_>>().join("\n"))
}

/// Runs the sweep and presses Ctrl-C `presses` times (0.2 s apart) half a second into its
/// first point; returns the exit code, the stderr after the first point's start, and the
/// store's directory (kept while it lives).
fn interrupted_sweep(presses: usize) -> (Option<i32>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db").display().to_string();
    let (child, rx) = start_sweep(&store);
    until(&rx, "[1/3]");
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..presses {
        // SAFETY: interrupts the child we spawned, by its PID, as Ctrl-C would.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(200));
    }
    let (code, log) = finish(child, &rx);
    (code, log, dir)
}

#[test]
fn the_first_ctrl_c_lets_the_running_point_finish_and_stops_the_sweep() {
    let (code, log, dir) = interrupted_sweep(1);
    assert_eq!(code, Some(1), "an unfinished sweep exits 1: {log}");
    assert!(log.contains("stopping after the running test"), "{log}");
    assert!(!log.contains("failed: interrupted"), "{log}");
    assert!(
        log.contains("stopped by Ctrl-C after 1 of 3 points"),
        "{log}"
    );
    assert!(!log.contains("[2/3]"), "{log}");
    let store = dir.path().join("runs.db").display().to_string();
    let series = json(&run(&["show", "s1", "--json", "--store", &store], 30));
    let points = series["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{series}");
    assert!(points[0]["error"].is_null(), "{series}");
    assert_eq!(series["complete"], false);
}

#[test]
fn a_second_ctrl_c_aborts_the_running_point() {
    let (code, log, _dir) = interrupted_sweep(2);
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("failed: interrupted"), "{log}");
    assert!(log.contains("stopped by Ctrl-C during point 1"), "{log}");
    assert!(!log.contains("[2/3]"), "{log}");
}
