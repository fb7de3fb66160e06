//! The data path: one blocking thread per stream (iperf3's client, one thread in 3.12, is the
//! bottleneck, not this). Senders stop at TEST_END; receivers drain until they hold what the
//! client says it sent (or the path has been quiet a moment), so `-n` figures match exactly.

use super::params::Params;
use super::udp;
use fathom_engine::payload::payload;
use fathom_proto::sample::TcpInfo;
use std::io::{self, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a blocked read or write waits before it looks at the test's flags again.
pub const POLL: Duration = Duration::from_millis(50);
/// The longest a receiver drains after TEST_END.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What every stream of one test shares with the control thread.
pub struct Shared {
    /// Senders stop (TEST_END, or the test is abandoned).
    pub stop_send: AtomicBool,
    /// Receivers stop at once (the test is abandoned).
    pub abort: AtomicBool,
    /// Receivers drain up to their target, then stop.
    pub drain: AtomicBool,
    /// Per stream, the bytes the client says it sent (u64::MAX until known).
    pub targets: Vec<AtomicU64>,
    /// Per stream, the bytes sent or received so far (omitted start included), for the log.
    pub counted: Vec<AtomicU64>,
    /// Bytes left to send across all streams (`-n`), u64::MAX for no limit.
    pub budget: AtomicU64,
    /// When the omitted start (`-O`) ends.
    pub omit_end: Instant,
}

impl Shared {
    /// A test's shared state for `n` streams.
    pub fn new(n: usize, budget: u64, omit_end: Instant) -> Shared {
        Shared {
            stop_send: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            drain: AtomicBool::new(false),
            targets: (0..n).map(|_| AtomicU64::new(u64::MAX)).collect(),
            counted: (0..n).map(|_| AtomicU64::new(0)).collect(),
            budget: AtomicU64::new(if budget == 0 { u64::MAX } else { budget }),
            omit_end,
        }
    }

    /// Whether receiver `index`, holding `counted` bytes, should stop: the test was abandoned,
    /// or it is draining (since `drain_since`, set here) and holds what the client sent or has
    /// drained long enough.
    pub fn done(&self, index: usize, counted: u64, drain_since: &mut Option<Instant>) -> bool {
        if self.abort.load(Ordering::Relaxed) {
            return true;
        }
        if !self.drain.load(Ordering::Relaxed) {
            return false;
        }
        let since = *drain_since.get_or_insert_with(Instant::now);
        counted >= self.targets[index].load(Ordering::Relaxed) || since.elapsed() > DRAIN_LIMIT
    }

    /// Adds `n` bytes to stream `index`'s running count.
    pub fn count(&self, index: usize, n: u64) {
        self.counted[index].fetch_add(n, Ordering::Relaxed);
    }

    /// Takes up to `want` bytes from the budget; 0 once it is spent.
    pub fn reserve(&self, want: u64) -> u64 {
        let mut left = self.budget.load(Ordering::Relaxed);
        loop {
            if left == u64::MAX {
                return want;
            }
            let take = want.min(left);
            match self.budget.compare_exchange_weak(
                left,
                left - take,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return take,
                Err(now) => left = now,
            }
        }
    }
}

/// One stream's socket.
pub enum Sock {
    /// A TCP data connection.
    Tcp(TcpStream),
    /// A connected UDP socket.
    Udp(UdpSocket),
}

/// What one stream counted, after the omitted start.
#[derive(Debug, Default, Clone)]
pub struct StreamEnd {
    /// Bytes sent or received.
    pub bytes: u64,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: u64,
    /// UDP: datagrams lost (gaps in the sequence numbers).
    pub lost: u64,
    /// UDP: datagrams that arrived out of order.
    pub out_of_order: u64,
    /// UDP: jitter, seconds (RFC 1889).
    pub jitter_s: f64,
    /// TCP: retransmitted segments.
    pub retransmits: u64,
    /// TCP: TCP_INFO at the end.
    pub tcp: Option<TcpInfo>,
    /// This thread's CPU time (user, system), µs.
    pub cpu_us: (u64, u64),
}

/// What a stream thread needs to run.
pub struct Job {
    /// Index in connection order.
    pub index: usize,
    /// This end sends.
    pub sends: bool,
    /// Bytes per write or datagram.
    pub len: usize,
    /// Bits per second (0: no limit).
    pub rate: u64,
    /// 64-bit UDP sequence numbers.
    pub udp64: bool,
    /// The test's flags.
    pub shared: Arc<Shared>,
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
    let cpu0 = thread_cpu_us();
    let mut end = match (sock, job.sends) {
        (Sock::Tcp(s), true) => send_tcp(s, &job),
        (Sock::Tcp(s), false) => recv_tcp(s, &job),
        (Sock::Udp(s), true) => udp::send(&s, &job),
        (Sock::Udp(s), false) => udp::recv(&s, &job),
    };
    let cpu1 = thread_cpu_us();
    end.cpu_us = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
    end
}

/// Sleeps until `bytes` sent fit `rate` bits/s since `start`, in slices that watch `stop`.
pub fn pace(rate: u64, start: Instant, bytes: u64, stop: &AtomicBool) {
    if rate == 0 {
        return;
    }
    let due = start + Duration::from_secs_f64(bytes as f64 * 8.0 / rate as f64);
    while !stop.load(Ordering::Relaxed) {
        let left = due.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(POLL));
    }
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
                Err(e) if super::wire::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                }
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
            Err(e) if super::wire::is_timeout(&e) => {
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

/// This thread's CPU time (user, system), µs.
pub fn thread_cpu_us() -> (u64, u64) {
    // SAFETY: rusage is plain data; getrusage fills it for the calling thread.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_exactly() {
        let sh = Shared::new(1, 10, Instant::now());
        assert_eq!(sh.reserve(4), 4);
        assert_eq!(sh.reserve(4), 4);
        assert_eq!(sh.reserve(4), 2);
        assert_eq!(sh.reserve(4), 0);
        assert_eq!(Shared::new(1, 0, Instant::now()).reserve(7), 7);
    }
}
