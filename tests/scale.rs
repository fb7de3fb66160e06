//! Many hosts: 40 client agents and one server on loopback in one synchronized test. The live
//! progress display stays one line on the terminal (redrawn in place, never one per host), the
//! interval lines are the aggregate's, the host table has one row per host, and the JSON keeps
//! every host. Each client moves a tiny amount, so the test is cheap.

mod common;
use common::*;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

const CLIENTS: usize = 40;

/// The server and the clients, each a new agent.
fn agents() -> (Agent, Vec<Agent>, String) {
    let server = Agent::start(&[]);
    let clients: Vec<Agent> = (0..CLIENTS).map(|_| Agent::start(&[])).collect();
    let list = clients
        .iter()
        .map(Agent::target)
        .collect::<Vec<_>>()
        .join(",");
    (server, clients, list)
}

/// A pseudo-terminal: (controller side, terminal side).
fn pty() -> (OwnedFd, OwnedFd) {
    let (mut controller, mut terminal) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the given integers; the rest may be null.
    let r = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    unsafe {
        (
            OwnedFd::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    }
}

#[test]
fn forty_clients_one_progress_line_and_one_row_per_host() {
    let (server, _clients, list) = agents();
    let (controller, terminal) = pty();
    // Bounded by coreutils' timeout, which keeps the terminal as the controller's stderr.
    let mut child = std::process::Command::new("timeout")
        .args(["-s", "KILL", "90", env!("CARGO_BIN_EXE_fathom")])
        .args(["stream", "--server", &server.target(), "--clients", &list])
        .args(["-n", "1M", "-i", "100ms", "--no-store"])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(terminal))
        .spawn()
        .expect("fathom runs");
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("stdout");
    let status = child.wait().expect("wait");
    // Everything the terminal got (the child has exited, so it all waits in the buffer).
    let mut shown = Vec::new();
    let mut reader = std::fs::File::from(controller);
    let mut buf = [0u8; 65536];
    loop {
        let mut fd = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&reader),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polls one descriptor, owned by `reader`, for at most 200 ms.
        if unsafe { libc::poll(&mut fd, 1, 200) } <= 0 {
            break;
        }
        match reader.read(&mut buf) {
            Ok(n) if n > 0 => shown.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    let shown = String::from_utf8_lossy(&shown);
    assert!(status.success(), "{out}\n{shown}");
    assert!(
        shown.contains("starting"),
        "the progress line was shown: {shown:?}"
    );
    assert!(
        !shown.contains('\n'),
        "the progress display stays on one line (redrawn in place): {shown:?}"
    );
    let host_rows = out.lines().filter(|l| l.starts_with("127.0.0.1:")).count();
    assert_eq!(
        host_rows,
        CLIENTS + 1,
        "one row per host in the table and no per-host interval lines:\n{out}"
    );
}

#[test]
fn forty_clients_json_keeps_every_host() {
    let (server, _clients, list) = agents();
    let j = run_json(
        &across(
            &server.target(),
            &list,
            &["stream", "-n", "1M", "--no-store"],
        ),
        90,
    );
    let hosts = j["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), CLIENTS + 1);
    assert_eq!(j["flows"].as_array().expect("flows").len(), CLIENTS);
    let client_bytes: u64 = hosts[1..]
        .iter()
        .map(|h| h["bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(client_bytes, j["summary"]["bytes"].as_u64().expect("bytes"));
    assert!(j["summary"]["start_skew_us"].is_number());
}
