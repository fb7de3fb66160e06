//! The benchmark reference for `rr --busy-poll`: the least a spinning ping-pong can do. Two
//! threads, one per CPU (0 and 1), exchange 1-byte messages over loopback TCP, each spinning on a
//! non-blocking recv. Prints transactions per second and the median round trip.
//!
//! Usage: cargo run --release -p fathom-engine --example spin_pingpong -- [SECONDS]

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

fn pin(cpu: usize) {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn spin_read(s: &mut TcpStream, b: &mut [u8]) -> bool {
    loop {
        match s.read(b) {
            Ok(0) => return false,
            Ok(_) => return true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return false,
        }
    }
}

fn main() {
    let secs: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        pin(1);
        let (mut s, _) = l.accept().unwrap();
        s.set_nodelay(true).unwrap();
        s.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        while spin_read(&mut s, &mut b) {
            s.write_all(&b).unwrap();
        }
    });
    pin(0);
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_nodelay(true).unwrap();
    c.set_nonblocking(true).unwrap();
    let mut b = [1u8; 1];
    let mut rtts = Vec::with_capacity(1 << 22);
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        let t = Instant::now();
        c.write_all(&b).unwrap();
        if !spin_read(&mut c, &mut b) {
            break;
        }
        rtts.push(t.elapsed().as_nanos() as u64);
    }
    drop(c);
    server.join().unwrap();
    rtts.sort_unstable();
    let median = rtts.get(rtts.len() / 2).copied().unwrap_or(0);
    println!(
        "{{\"transactions_per_second\": {}, \"p50_us\": {}}}",
        rtts.len() as f64 / secs as f64,
        median as f64 / 1e3
    );
}
