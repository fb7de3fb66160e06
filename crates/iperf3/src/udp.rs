//! iperf3's UDP streams: the client opens each with a 4-byte hello to the server's port, the
//! server connects a socket to it and answers; datagrams then carry seconds, microseconds and
//! a sequence number (32 or 64 bits, big-endian) ahead of the payload. Lost and total come from
//! the sequence numbers, as iperf3 counts them.

use super::job::{pace, Job, StreamEnd, POLL};
use super::wire::is_timeout;
use fathom_engine::payload::payload;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The server's answer to a stream's hello ("6789" on the wire from a little-endian host, as
/// iperf3 writes the integer in host order).
const REPLY: u32 = 0x3938_3736;

/// A UDP socket bound to the iperf3 port, ready for the next stream's hello.
pub fn listener(addr: SocketAddr) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.bind(&addr.into())?;
    Ok(s.into())
}

/// Waits for one stream's hello on `sock`, connects `sock` to its sender, binds a fresh
/// listener for the next stream and answers; returns the connected socket and the new listener.
pub fn accept(sock: UdpSocket, deadline: Instant) -> io::Result<(UdpSocket, UdpSocket)> {
    let mut b = [0u8; 64];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no UDP stream arrived",
            ));
        }
        sock.set_read_timeout(Some(left))?;
        match sock.recv_from(&mut b) {
            Ok((4, peer)) => {
                sock.connect(peer)?;
                let next = listener(sock.local_addr()?)?;
                sock.send(&REPLY.to_ne_bytes())?;
                return Ok((sock, next));
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Monotonic time as iperf3 stamps it: (seconds, microseconds).
fn now_stamp() -> (u32, u32) {
    let ns = fathom_engine::clock::now_ns();
    (
        (ns / 1_000_000_000) as u32,
        (ns % 1_000_000_000 / 1000) as u32,
    )
}

/// Sends paced datagrams until TEST_END or the byte budget is spent.
pub fn send(s: &UdpSocket, job: &Job) -> StreamEnd {
    let _ = s.set_write_timeout(Some(POLL));
    let mut buf = payload(job.len);
    let sh = &job.shared;
    let (start, mut total, mut seq) = (Instant::now(), 0u64, 0u64);
    let mut omitted = None;
    while !sh.stop_send.load(Ordering::Relaxed) {
        let want = sh.reserve(buf.len() as u64) as usize;
        if want == 0 {
            break;
        }
        if omitted.is_none() && Instant::now() >= sh.omit_end {
            omitted = Some((total, seq));
        }
        pace(job.rate, start, total, &sh.stop_send);
        seq += 1;
        let (sec, usec) = now_stamp();
        buf[0..4].copy_from_slice(&sec.to_be_bytes());
        buf[4..8].copy_from_slice(&usec.to_be_bytes());
        if job.udp64 {
            buf[8..16].copy_from_slice(&seq.to_be_bytes());
        } else {
            buf[8..12].copy_from_slice(&(seq as u32).to_be_bytes());
        }
        match s.send(&buf[..want.max(16)]) {
            Ok(n) => {
                total += n as u64;
                sh.count(job.index, n as u64);
            }
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => seq -= 1,
            // The client's socket closed or refused one datagram: counted as sent, as iperf3 does.
            Err(_) => {
                total += want as u64;
                sh.count(job.index, want as u64);
            }
        }
    }
    let (ob, os) = omitted.unwrap_or((0, 0));
    StreamEnd {
        bytes: total - ob,
        packets: seq - os,
        ..StreamEnd::default()
    }
}

/// What a UDP receiver keeps: iperf3's counting of sequence numbers and RFC 1889 jitter.
#[derive(Default)]
struct Count {
    bytes: u64,
    highest: u64,
    lost: u64,
    out_of_order: u64,
    jitter: f64,
    transit: Option<f64>,
}

impl Count {
    fn add(&mut self, d: &[u8], udp64: bool) {
        if d.len() < 12 || (udp64 && d.len() < 16) {
            return;
        }
        self.bytes += d.len() as u64;
        let word = |i: usize| u32::from_be_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]]);
        let seq = if udp64 {
            u64::from_be_bytes(d[8..16].try_into().unwrap_or_default())
        } else {
            u64::from(word(8))
        };
        if seq > self.highest {
            self.lost += seq - 1 - self.highest;
            self.highest = seq;
        } else {
            self.out_of_order += 1;
            self.lost = self.lost.saturating_sub(1);
        }
        let (ns, nu) = now_stamp();
        let sent = f64::from(word(0)) + f64::from(word(4)) / 1e6;
        let transit = f64::from(ns) + f64::from(nu) / 1e6 - sent;
        if let Some(prev) = self.transit.replace(transit) {
            self.jitter += ((transit - prev).abs() - self.jitter) / 16.0;
        }
    }
}

/// Receives datagrams until TEST_END's drain or an abort.
pub fn recv(s: &UdpSocket, job: &Job) -> StreamEnd {
    let _ = s.set_read_timeout(Some(POLL));
    let mut buf = vec![0u8; 65_536];
    let sh = &job.shared;
    let (mut c, mut omitted, mut drain_since) = (Count::default(), None, None);
    loop {
        let (ob, _, _) = omitted.unwrap_or((0, 0, 0));
        if sh.done(job.index, c.bytes - ob, &mut drain_since) {
            break;
        }
        if omitted.is_none() && Instant::now() >= sh.omit_end {
            omitted = Some((c.bytes, c.highest, c.lost));
        }
        match s.recv(&mut buf) {
            Ok(n) => {
                c.add(&buf[..n], job.udp64);
                sh.count(job.index, n as u64);
            }
            Err(e) if is_timeout(&e) => {
                if drain_since.is_some() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // ECONNREFUSED from an ICMP error: the stream goes on.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(_) => break,
        }
    }
    let (ob, oh, ol) = omitted.unwrap_or((0, 0, 0));
    StreamEnd {
        bytes: c.bytes - ob,
        packets: c.highest - oh,
        lost: c.lost.saturating_sub(ol),
        out_of_order: c.out_of_order,
        jitter_s: c.jitter,
        ..StreamEnd::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(seq: u32) -> Vec<u8> {
        let (s, u) = now_stamp();
        let mut d = vec![0u8; 64];
        d[0..4].copy_from_slice(&s.to_be_bytes());
        d[4..8].copy_from_slice(&u.to_be_bytes());
        d[8..12].copy_from_slice(&seq.to_be_bytes());
        d
    }

    #[test]
    fn counts_gaps_and_late_arrivals_as_iperf3_does() {
        let mut c = Count::default();
        for seq in [1, 2, 5, 3, 6] {
            c.add(&datagram(seq), false);
        }
        assert_eq!((c.highest, c.lost, c.out_of_order, c.bytes), (6, 1, 1, 320));
        c.add(&[0u8; 5], false);
        assert_eq!(c.bytes, 320);
    }
}
