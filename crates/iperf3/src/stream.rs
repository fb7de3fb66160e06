//! The data path: one blocking thread per stream (iperf3's client, one thread in 3.12, is the
//! bottleneck, not this). Senders stop at TEST_END; receivers drain until they hold what the
//! client says it sent (or the path has been quiet a moment), so `-n` figures match exactly.

use super::job::{pace, Job, Shared, StreamEnd, POLL};
use super::params::Params;
use super::udp;
use super::wire::is_timeout;
use fathom_engine::measure::cpu::thread_rusage_us;
use fathom_engine::payload::payload;
use fathom_proto::sample::TcpInfo;
use std::io::{self, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// One stream's socket.
pub enum Sock {
    /// A TCP data connection.
    Tcp(TcpStream),
    /// A connected UDP socket.
    Udp(UdpSocket),
}

/// Starts one thread per stream; on the server's end (`server_end`) the streams the server
/// sends on send, on the client's the others.
pub fn spawn(
    socks: Vec<Sock>,
    p: &Params,
    shared: &Arc<Shared>,
    server_end: bool,
) -> Vec<JoinHandle<StreamEnd>> {
    socks
        .into_iter()
        .enumerate()
        .map(|(index, sock)| {
            let job = Job {
                index,
                sends: p.server_sends(index as u32) == server_end,
                len: p.len,
                rate: p.rate,
                udp64: p.udp64,
                shared: shared.clone(),
            };
            std::thread::Builder::new()
                .name(format!("iperf3-{index}"))
                .spawn(move || run(sock, job))
        })
        .filter_map(Result::ok)
        .collect()
}

/// Runs one stream to its end.
pub fn run(sock: Sock, job: Job) -> StreamEnd {
    let cpu0 = thread_rusage_us();
    let mut end = match (sock, job.sends) {
        (Sock::Tcp(s), true) => send_tcp(s, &job),
        (Sock::Tcp(s), false) => recv_tcp(s, &job),
        (Sock::Udp(s), true) => udp::send(&s, &job),
        (Sock::Udp(s), false) => udp::recv(&s, &job),
    };
    let cpu1 = thread_rusage_us();
    end.cpu_us = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
    end
}

fn send_tcp(mut s: TcpStream, job: &Job) -> StreamEnd {
    let _ = s.set_write_timeout(Some(POLL));
    let buf = payload(job.len);
    let sh = &job.shared;
    let (start, mut total, mut omitted, mut retr0) = (Instant::now(), 0u64, None, 0);
    while !sh.stop_send.load(Ordering::Relaxed) {
        let want = sh.reserve(buf.len() as u64) as usize;
        if want == 0 {
            break;
        }
        if omitted.is_none() && Instant::now() >= sh.omit_end {
            omitted = Some(total);
            retr0 = tcp_info(&s).map_or(0, |t| t.retransmits);
        }
        pace(job.rate, start, total, &sh.stop_send);
        let mut done = 0;
        while done < want && !sh.stop_send.load(Ordering::Relaxed) {
            match s.write(&buf[done..want]) {
                Ok(n) => done += n,
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        // What a cut-short write did send is counted too: the receiver counts it.
        total += done as u64;
        sh.count(job.index, done as u64);
        if done < want {
            break;
        }
    }
    let tcp = tcp_info(&s);
    StreamEnd {
        bytes: total - omitted.unwrap_or(0),
        retransmits: tcp
            .as_ref()
            .map_or(0, |t| t.retransmits.saturating_sub(retr0))
            .into(),
        tcp,
        ..StreamEnd::default()
    }
}

fn recv_tcp(mut s: TcpStream, job: &Job) -> StreamEnd {
    let _ = s.set_read_timeout(Some(POLL));
    let mut buf = vec![0u8; job.len.max(64 * 1024)];
    let sh = &job.shared;
    let (mut total, mut omitted, mut drain_since) = (0u64, None, None);
    loop {
        if sh.done(job.index, total - omitted.unwrap_or(0), &mut drain_since) {
            break;
        }
        if omitted.is_none() && Instant::now() >= sh.omit_end {
            omitted = Some(total);
        }
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                sh.count(job.index, n as u64);
            }
            Err(e) if is_timeout(&e) => {
                if drain_since.is_some() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    StreamEnd {
        bytes: total - omitted.unwrap_or(0),
        tcp: tcp_info(&s),
        ..StreamEnd::default()
    }
}

fn tcp_info(s: &TcpStream) -> Option<TcpInfo> {
    use std::os::fd::AsRawFd;
    fathom_engine::measure::tcp_info::read(s.as_raw_fd())
}
