//! Records the seeds of the `iperf3_control` target: what Debian's iperf3 client (3.12) sends on
//! its control connection for a set of its command lines, captured by a relay between the client
//! and fathom's iperf3 server (`fathom serve --iperf3`'s, run in this process on loopback).
//! The relay forwards every TCP connection and one UDP flow both ways, and keeps what the
//! client sent on its first connection, the control connection.
//!
//! `cargo run --example iperf3_seeds -- corpus` (in fuzz/; needs `iperf3` on the PATH) writes
//! corpus/iperf3_control/seed-NAME.

use fathom_iperf3::Server;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The client's command lines, each a seed (UDP with one stream: the relay carries one flow).
const RUNS: &[(&str, &[&str])] = &[
    ("tcp", &["-t", "1"]),
    ("reverse", &["-t", "1", "-R"]),
    ("parallel", &["-t", "1", "-P", "3"]),
    ("bidir", &["-t", "1", "--bidir"]),
    ("bytes", &["-n", "1M", "-l", "64K"]),
    ("blocks", &["-k", "16", "-R"]),
    (
        "options",
        &[
            "-t", "1", "-O", "1", "-w", "256K", "-M", "1000", "-N", "-S", "16", "-C", "cubic",
        ],
    ),
    ("udp", &["-u", "-b", "10M", "-l", "1400", "-t", "1"]),
    (
        "udp64-reverse",
        &["-u", "-b", "10M", "-t", "1", "--udp-counters-64bit", "-R"],
    ),
    ("sctp", &["--sctp", "-t", "1"]),
];

fn main() {
    let root = std::env::args()
        .nth(1)
        .expect("usage: iperf3_seeds CORPUS_DIR");
    let dir = format!("{root}/iperf3_control");
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    let loopback: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let server = Server::bind(loopback, 3_600_000_000_000).expect("bind the iperf3 server");
    let target = server.local_addr().expect("its address");
    std::thread::spawn(move || server.serve());
    for (name, args) in RUNS {
        let bytes = record(target, args);
        assert!(bytes.len() > 37, "{name}: the client sent no parameters");
        std::fs::write(format!("{dir}/seed-{name}"), bytes).expect("write a seed");
        // The server frees its test slot once the client's IPERF_DONE is read.
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Runs `iperf3 -c` with `args` through a relay to `target`; what it sent on its control
/// connection.
fn record(target: SocketAddr, args: &[&str]) -> Vec<u8> {
    let proxy = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
    let port = proxy.local_addr().expect("the relay's address").port();
    let udp = UdpSocket::bind(("127.0.0.1", port)).expect("bind the relay's UDP port");
    let done = Arc::new(AtomicBool::new(false));
    let control = Arc::new(Mutex::new(Vec::new()));
    relay_udp(udp, target, done.clone());
    let kept = control.clone();
    std::thread::spawn(move || {
        for (i, conn) in proxy.incoming().enumerate() {
            let (Ok(client), Ok(server)) = (conn, TcpStream::connect(target)) else {
                continue;
            };
            let keep = (i == 0).then(|| kept.clone());
            pipe(
                client.try_clone().expect("clone"),
                server.try_clone().expect("clone"),
                keep,
            );
            pipe(server, client, None);
        }
    });
    let status = Command::new("timeout")
        .args(["30", "iperf3", "-c", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .status()
        .expect("run iperf3");
    eprintln!("iperf3 {args:?}: {status}");
    std::thread::sleep(Duration::from_millis(300));
    done.store(true, Ordering::SeqCst);
    let bytes = control.lock().expect("the record").clone();
    bytes
}

/// Copies `from` to `to` on a thread until `from` ends, keeping a copy in `keep`.
fn pipe(mut from: TcpStream, mut to: TcpStream, keep: Option<Arc<Mutex<Vec<u8>>>>) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some(k) = &keep {
                k.lock().expect("the record").extend_from_slice(&buf[..n]);
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// Relays one UDP flow between the client (whoever sends to `near` first) and `target`, until
/// `done`.
fn relay_udp(near: UdpSocket, target: SocketAddr, done: Arc<AtomicBool>) {
    let far = UdpSocket::bind("127.0.0.1:0").expect("bind the relay's far socket");
    far.connect(target)
        .expect("connect to the server's UDP port");
    let client = Arc::new(Mutex::new(None::<SocketAddr>));
    let tick = Some(Duration::from_millis(100));
    for s in [&near, &far] {
        s.set_read_timeout(tick).expect("a read timeout");
    }
    let (near2, far2, client2, done2) = (
        near.try_clone().expect("clone"),
        far.try_clone().expect("clone"),
        client.clone(),
        done.clone(),
    );
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        while !done.load(Ordering::SeqCst) {
            if let Ok((n, from)) = near.recv_from(&mut buf) {
                *client.lock().expect("the client") = Some(from);
                let _ = far.send(&buf[..n]);
            }
        }
    });
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        while !done2.load(Ordering::SeqCst) {
            if let Ok(n) = far2.recv(&mut buf) {
                if let Some(to) = *client2.lock().expect("the client") {
                    let _ = near2.send_to(&buf[..n], to);
                }
            }
        }
    });
}
