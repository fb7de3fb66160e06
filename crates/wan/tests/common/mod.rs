//! A three-namespace lab for the integration tests: host A ── router R ── host B, joined by veth
//! pairs with offloads off, addresses 10.250.0.1 (A) and 10.250.0.2 (B). Every test builds its own
//! (names carry the pid and a tag) and the guard deletes it on drop, panics included. Traffic goes
//! only to the namespaces made here.

#![allow(dead_code)] // each test file uses its own part of the helpers

use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fathom_wan::{netns, Forwarder, LinkParams};

pub const A_ADDR: &str = "10.250.0.1";
pub const B_ADDR: &str = "10.250.0.2";

/// Returns early from a test, saying why, unless it runs as root.
#[macro_export]
macro_rules! require_root {
    () => {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root to create network namespaces");
            return;
        }
    };
}

/// The namespaces of one test; deleted on drop.
pub struct Lab {
    pub a: String,
    pub r: String,
    pub b: String,
}

/// Runs `command` with a 10 s limit; panics with its stderr if it fails.
pub fn run(command: &[&str]) {
    let output = Command::new("timeout")
        .arg("10")
        .args(command)
        .output()
        .expect("runs timeout(1)");
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `f` on a thread inside network namespace `ns` and returns its result.
pub fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        netns::enter(&ns).expect("enter namespace");
        f()
    })
    .join()
    .expect("namespace thread")
}

impl Lab {
    /// Builds A – R – B for the test named `tag`.
    pub fn new(tag: &str) -> Lab {
        let prefix = format!("fwan-{}-{tag}", std::process::id());
        let lab = Lab {
            a: format!("{prefix}-a"),
            r: format!("{prefix}-r"),
            b: format!("{prefix}-b"),
        };
        for ns in [&lab.a, &lab.r, &lab.b] {
            run(&["ip", "netns", "add", ns]);
            run(&["ip", "-n", ns, "link", "set", "lo", "up"]);
            run(&[
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
            ]);
        }
        run(&[
            "ip", "link", "add", "eth0", "netns", &lab.a, "type", "veth", "peer", "name", "ra",
            "netns", &lab.r,
        ]);
        run(&[
            "ip", "link", "add", "eth0", "netns", &lab.b, "type", "veth", "peer", "name", "rb",
            "netns", &lab.r,
        ]);
        run(&[
            "ip",
            "-n",
            &lab.a,
            "addr",
            "add",
            &format!("{A_ADDR}/24"),
            "dev",
            "eth0",
        ]);
        run(&[
            "ip",
            "-n",
            &lab.b,
            "addr",
            "add",
            &format!("{B_ADDR}/24"),
            "dev",
            "eth0",
        ]);
        for (ns, ifname) in [
            (&lab.a, "eth0"),
            (&lab.b, "eth0"),
            (&lab.r, "ra"),
            (&lab.r, "rb"),
        ] {
            let name = ifname.to_string();
            in_netns(ns, move || fathom_wan::disable_offloads(&name)).expect("offloads off");
            run(&["ip", "-n", ns, "link", "set", ifname, "up"]);
        }
        lab
    }

    /// Starts the emulator in R with the given parameters for A→B and B→A.
    pub fn forwarder(&self, a_to_b: &str, b_to_a: &str) -> Forwarder {
        let (ab, ba): (LinkParams, LinkParams) = (a_to_b.parse().unwrap(), b_to_a.parse().unwrap());
        in_netns(&self.r, move || Forwarder::start("ra", "rb", ab, ba)).expect("forwarder starts")
    }

    /// Starts the emulator as [`Lab::forwarder`] does and an echo server on B, and waits until
    /// an echo gets through.
    pub fn forwarding(&self, a_to_b: &str, b_to_a: &str) -> (Forwarder, Echo) {
        let forwarder = self.forwarder(a_to_b, b_to_a);
        let echo = Echo::start(self);
        wait_for_path(self);
        (forwarder, echo)
    }

    /// A UDP socket in A (`on_b` false) or B, bound to its address on `port` (0: any).
    pub fn socket(&self, on_b: bool, port: u16) -> UdpSocket {
        let (ns, addr) = if on_b {
            (&self.b, B_ADDR)
        } else {
            (&self.a, A_ADDR)
        };
        let addr: SocketAddr = format!("{addr}:{port}").parse().unwrap();
        in_netns(ns, move || UdpSocket::bind(addr)).expect("bind UDP socket")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in [&self.a, &self.r, &self.b] {
            let _ = Command::new("timeout")
                .args(["10", "ip", "netns", "del", ns])
                .status();
        }
    }
}

/// A thread that reads datagrams from a socket and hands each to a closure with the state it
/// keeps, until stopped (the socket's read timeout bounds how long a stop waits); stopped and
/// joined on drop.
pub struct Reader<T> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<T>>,
}

impl<T: Send + 'static> Reader<T> {
    /// Reads `socket`, waking every `poll`, and calls `each(state, socket, datagram, sender)`
    /// for every datagram.
    pub fn start(
        socket: UdpSocket,
        poll: Duration,
        mut state: T,
        mut each: impl FnMut(&mut T, &UdpSocket, &[u8], SocketAddr) + Send + 'static,
    ) -> Reader<T> {
        socket.set_read_timeout(Some(poll)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !flag.load(Ordering::Relaxed) {
                if let Ok((n, peer)) = socket.recv_from(&mut buf) {
                    each(&mut state, &socket, &buf[..n], peer);
                }
            }
            state
        });
        Reader {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the thread and returns its state.
    pub fn stop(mut self) -> T {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().expect("a running reader");
        thread.join().expect("the reader thread")
    }
}

impl<T> Drop for Reader<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A UDP echo server on B, stopped and joined on drop.
pub struct Echo(Reader<()>);

pub const ECHO_PORT: u16 = 7007;

impl Echo {
    pub fn start(lab: &Lab) -> Echo {
        let socket = lab.socket(true, ECHO_PORT);
        Echo(Reader::start(
            socket,
            Duration::from_millis(20),
            (),
            |_, socket, datagram, peer| {
                let _ = socket.send_to(datagram, peer);
            },
        ))
    }
}

/// Round trips of `count` sequential echo probes from A (each waits up to `timeout`); lost
/// probes are left out. Probes go at least 10 ms apart.
pub fn round_trips(lab: &Lab, count: usize, timeout: Duration) -> Vec<Duration> {
    let socket = lab.socket(false, 0);
    socket.set_read_timeout(Some(timeout)).unwrap();
    let target: SocketAddr = format!("{B_ADDR}:{ECHO_PORT}").parse().unwrap();
    let mut rtts = Vec::new();
    let mut buf = [0u8; 64];
    for seq in 0..count as u32 {
        let sent = Instant::now();
        socket.send_to(&seq.to_be_bytes(), target).unwrap();
        while let Ok(n) = socket.recv(&mut buf) {
            if n == 4 && buf[..4] == seq.to_be_bytes() {
                rtts.push(sent.elapsed());
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(10).saturating_sub(sent.elapsed()));
    }
    rtts
}

/// Waits until an echo gets through (ARP resolved, forwarder running); panics after 5 s.
pub fn wait_for_path(lab: &Lab) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while round_trips(lab, 1, Duration::from_millis(500)).is_empty() {
        assert!(
            Instant::now() < deadline,
            "no path from A to B through the emulator"
        );
    }
}
