//! The client side: drives a stock iperf3 server (`iperf3 -s`) through the same exchange the
//! server side answers (see `session`), with fathom's stream threads on this end, and returns
//! both ends: this end's counts, TCP_INFO and CPU, and the far end's results as iperf3 sent them,
//! bounded (`peer::bounded`: its unknowns null).
//! TCP streams connect and send the cookie; UDP streams say hello (`udp_client`).

use super::client_interval::{Interval, Sampler};
use super::error::TestError;
use super::job::{Shared, StreamEnd};
use super::params::Params;
use super::results::{cpu_percent, cpu_used, stream_id, HostTicks};
use super::stream::{self, Sock};
use super::wire::{self, State, COOKIE_LEN};
use fathom_engine::measure::cpu::thread_rusage_us;
use serde_json::{json, Value};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long each step of the exchange may take.
const STEP: Duration = Duration::from_secs(10);
/// How often the control connection is looked at while the test runs.
const TICK: Duration = Duration::from_millis(50);
/// How long a UDP sender waits after its last datagram before it says TEST_END.
const SETTLE: Duration = Duration::from_millis(250);
/// How long a TCP sender waits at most for the server to acknowledge all it sent before it says
/// TEST_END (the server counts only what it read by then).
const DRAIN: Duration = Duration::from_secs(2);
/// How long a `-n` test may see no data move before it ends.
const QUIET: Duration = Duration::from_secs(3);

/// Both ends of a finished test.
pub struct Both {
    /// What ran.
    pub params: Params,
    /// This end's counts per stream.
    pub near: Vec<StreamEnd>,
    /// This end's CPU (total, user, system), % of the test's wall time.
    pub near_cpu: (f64, f64, f64),
    /// The server's results message, as it sent it but bounded: a number out of range (iperf3's
    /// -1, written as 2^64-1) or an overlong string is null.
    pub far: Value,
    /// Seconds from TEST_RUNNING (after `-O`) to TEST_END.
    pub seconds: f64,
    /// What was known once the streams were connected.
    pub start: Start,
    /// This end's intervals (every `-i`).
    pub intervals: Vec<Interval>,
    /// This host's CPU ticks over `near_cpu`'s wall time.
    pub host: HostTicks,
}

/// What is known once the streams are connected (iperf3's `start`).
#[derive(Debug, Clone)]
pub struct Start {
    /// Per stream, (local, remote) addresses.
    pub connected: Vec<(SocketAddr, SocketAddr)>,
    /// When the test started, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The test's cookie.
    pub cookie: String,
    /// The first stream's SO_SNDBUF and SO_RCVBUF as the kernel set them.
    pub bufs: (u64, u64),
    /// The first stream's congestion control (TCP).
    pub congestion: Option<String>,
    /// The first stream's TCP_MAXSEG (TCP; 0 for UDP).
    pub mss: u32,
}

/// What the client reports while a test runs.
pub enum Event<'a> {
    /// The streams are connected and the test runs.
    Started(&'a Start),
    /// An interval was cut.
    Interval(&'a Interval),
}

/// How the client runs, beyond what it asks of the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long connecting (the control connection and each stream) may take.
    pub connect_timeout: Duration,
    /// How often an interval is cut.
    pub interval: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            connect_timeout: STEP,
            interval: Duration::from_secs(1),
        }
    }
}

/// Runs one test against the iperf3 server at `addr`; `each` sees the start and every interval
/// as it is cut.
pub fn run(
    addr: SocketAddr,
    p: Params,
    o: &Options,
    each: &mut dyn FnMut(Event),
) -> Result<Both, TestError> {
    let mut ctrl = TcpStream::connect_timeout(&addr, o.connect_timeout).map_err(TestError::at(
        format!("cannot connect to the iperf3 server {addr}"),
    ))?;
    let cookie = cookie()?;
    ctrl.write_all(&cookie)?;
    expect(&mut ctrl, State::ParamExchange)?;
    wire::send_json(&mut ctrl, &params_json(&p))?;
    expect(&mut ctrl, State::CreateStreams)?;
    let (socks, connected) = open_streams(addr, &cookie, &p, o)?;
    expect(&mut ctrl, State::TestStart)?;
    expect(&mut ctrl, State::TestRunning)?;
    let start = start_info(&socks, connected, &cookie);
    each(Event::Started(&start));
    let (cpu0, mut host) = (thread_rusage_us(), HostTicks::begin());
    let started = Instant::now();
    let omit_end = started + Duration::from_secs(p.omit);
    let shared = Arc::new(Shared::new(socks.len(), p.bytes, omit_end));
    let mut sampler = Sampler::new(o.interval, started, omit_end, tcp_clones(&socks));
    let sent_on: Vec<Option<TcpStream>> = tcp_clones(&socks)
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.filter(|_| !p.server_sends(i as u32)))
        .collect();
    let threads = stream::spawn(socks, &p, &shared, false);
    let watched = watch(&mut ctrl, &p, &shared, started, &mut sampler, each);
    shared.stop_send.store(true, Relaxed);
    let ended = Instant::now();
    if let Some(iv) = sampler.finish(&shared, ended) {
        each(Event::Interval(iv));
    }
    if p.udp && !p.reverse {
        // The server stops reading at TEST_END: let the last datagrams reach it first.
        std::thread::sleep(SETTLE);
    } else if watched.is_ok() {
        acked(&sent_on, DRAIN);
    }
    let result = watched
        .and_then(|_| wire::send_state(&mut ctrl, State::TestEnd).map_err(TestError::from))
        .and_then(|_| expect(&mut ctrl, State::ExchangeResults));
    shared.drain.store(true, Relaxed);
    if result.is_err() {
        shared.abort.store(true, Relaxed);
    }
    let near: Vec<StreamEnd> = threads
        .into_iter()
        .map(|t| t.join().unwrap_or_default())
        .collect();
    result?;
    let cpu1 = thread_rusage_us();
    host.finish();
    let (u, s) = cpu_used(cpu0, cpu1, &near);
    let near_cpu = cpu_percent(u, s, started.elapsed().as_secs_f64());
    let seconds = ended.saturating_duration_since(omit_end).as_secs_f64();
    let far = swap_results(&mut ctrl, client_results(&p, &near, near_cpu, seconds))?;
    Ok(Both {
        params: p,
        near,
        near_cpu,
        far,
        seconds,
        start,
        intervals: sampler.out,
        host,
    })
}

/// Sends this end's results, reads the server's, and closes the exchange.
fn swap_results(ctrl: &mut TcpStream, mine: Value) -> Result<Value, TestError> {
    wire::send_json(ctrl, &mine)?;
    let far = wire::read_json(ctrl, Instant::now() + STEP)
        .map_err(TestError::at("reading the server's results"))?;
    expect(ctrl, State::DisplayResults)?;
    let _ = wire::send_state(ctrl, State::IperfDone);
    Ok(super::peer::bounded(far))
}

/// Connects the streams: TCP connections that send the cookie, or UDP hellos; each with the
/// options the test asks for on this end too.
#[allow(clippy::type_complexity)]
fn open_streams(
    addr: SocketAddr,
    cookie: &[u8; COOKIE_LEN],
    p: &Params,
    o: &Options,
) -> Result<(Vec<Sock>, Vec<(SocketAddr, SocketAddr)>), TestError> {
    let (mut socks, mut connected) = (Vec::new(), Vec::new());
    for _ in 0..p.streams() {
        let deadline = Instant::now() + o.connect_timeout;
        let (sock, local) = if p.udp {
            let s = super::udp_client::connect(addr, p.window, deadline)?;
            let local = s.local_addr()?;
            (Sock::Udp(s), local)
        } else {
            let mut s = TcpStream::connect_timeout(&addr, o.connect_timeout)
                .map_err(TestError::at(format!("connecting a stream to {addr}")))?;
            configure(&s, p)?;
            s.write_all(cookie)?;
            let local = s.local_addr()?;
            (Sock::Tcp(s), local)
        };
        socks.push(sock);
        connected.push((local, addr));
    }
    Ok((socks, connected))
}

/// Applies `-w`, `-C`, `-M` and `-N` to a TCP stream on this end, as iperf3's client does, and
/// `-b` as SO_MAX_PACING_RATE.
fn configure(s: &TcpStream, p: &Params) -> Result<(), TestError> {
    let sock = socket2::SockRef::from(s);
    let fail = |flag, source| TestError::Option { flag, source };
    if p.window > 0 {
        sock.set_send_buffer_size(p.window as usize)
            .and_then(|_| sock.set_recv_buffer_size(p.window as usize))
            .map_err(|e| fail("-w", e))?;
    }
    if let Some(cc) = &p.congestion {
        sock.set_tcp_congestion(cc.as_bytes())
            .map_err(|e| fail("-C", e))?;
    }
    if p.mss > 0 {
        sock.set_mss(p.mss).map_err(|e| fail("-M", e))?;
    }
    if p.nodelay {
        sock.set_nodelay(true).map_err(|e| fail("-N", e))?;
    }
    if p.rate > 0 {
        // iperf3's -b for TCP: the kernel paces each stream too, not only the writes.
        use std::os::fd::AsRawFd;
        fathom_engine::sockopt::set_max_pacing_rate(s.as_raw_fd(), (p.rate / 8).max(1))
            .map_err(|e| fail("-b", e))?;
    }
    Ok(())
}

/// The test's start: the first stream's buffer sizes, congestion control and MSS as the kernel
/// has them.
fn start_info(
    socks: &[Sock],
    connected: Vec<(SocketAddr, SocketAddr)>,
    cookie: &[u8; COOKIE_LEN],
) -> Start {
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut start = Start {
        connected,
        started_unix,
        cookie: String::from_utf8_lossy(&cookie[..COOKIE_LEN - 1]).into_owned(),
        bufs: (0, 0),
        congestion: None,
        mss: 0,
    };
    let sock = match socks.first() {
        Some(Sock::Tcp(t)) => socket2::SockRef::from(t),
        Some(Sock::Udp(u)) => socket2::SockRef::from(u),
        None => return start,
    };
    let size = |r: std::io::Result<usize>| r.map_or(0, |n| n as u64);
    let cc = match socks.first() {
        Some(Sock::Tcp(_)) => sock.tcp_congestion().ok().map(|b| {
            String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .to_string()
        }),
        _ => None,
    };
    start.bufs = (size(sock.send_buffer_size()), size(sock.recv_buffer_size()));
    start.congestion = cc;
    if matches!(socks.first(), Some(Sock::Tcp(_))) {
        start.mss = sock.mss().unwrap_or(0);
    }
    start
}

/// A clone of each TCP stream, for TCP_INFO at every interval.
/// Waits, at most `limit`, until every stream in `sent_on` has no byte left unsent or unacknowledged:
/// an iperf3 server stops reading at TEST_END, so data still in flight then would be missing
/// from its count, and `-n` would no longer match at both ends.
fn acked(sent_on: &[Option<TcpStream>], limit: Duration) {
    use std::os::fd::AsRawFd;
    let deadline = Instant::now() + limit;
    let in_flight = |s: &TcpStream| {
        fathom_engine::measure::tcp_info::read(s.as_raw_fd())
            .is_some_and(|t| t.notsent_bytes > 0 || t.unacked > 0)
    };
    while Instant::now() < deadline && sent_on.iter().flatten().any(in_flight) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn tcp_clones(socks: &[Sock]) -> Vec<Option<TcpStream>> {
    socks
        .iter()
        .map(|s| match s {
            Sock::Tcp(t) => t.try_clone().ok(),
            Sock::Udp(_) => None,
        })
        .collect()
}

/// A fresh cookie: 36 characters of iperf3's alphabet and a NUL.
fn cookie() -> Result<[u8; COOKIE_LEN], TestError> {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut c = [0u8; COOKIE_LEN];
    let mut f = std::fs::File::open("/dev/urandom").map_err(TestError::at("/dev/urandom"))?;
    std::io::Read::read_exact(&mut f, &mut c[..COOKIE_LEN - 1])?;
    for b in &mut c[..COOKIE_LEN - 1] {
        *b = ALPHABET[usize::from(*b) % 32];
    }
    c[COOKIE_LEN - 1] = 0;
    Ok(c)
}

/// Reads the server's next state, which must be `want`; iperf3's refusals become their text.
fn expect(ctrl: &mut TcpStream, want: State) -> Result<(), TestError> {
    let b = wire::read_state(ctrl, Instant::now() + STEP).map_err(TestError::at(format!(
        "waiting for {want:?} from the iperf3 server"
    )))?;
    match State::from_byte(b) {
        Some(s) if s == want => Ok(()),
        Some(State::AccessDenied) => Err(TestError::Busy),
        Some(State::ServerError) => {
            let mut code = [0u8; 8];
            let _ = wire::read_by(ctrl, &mut code, Instant::now() + STEP);
            let n = i32::from_be_bytes([code[0], code[1], code[2], code[3]]);
            Err(TestError::Refused(n))
        }
        got => Err(TestError::OutOfTurn { got, byte: b, want }),
    }
}

/// The parameters message, as iperf3 3.12's client writes it.
fn params_json(p: &Params) -> Value {
    let mut v = json!({"omit": p.omit, "time": p.time, "num": p.bytes,
        "blockcount": 0, "parallel": p.parallel, "len": p.len, "pacing_timer": 1000,
        "client_version": "3.12"});
    v[if p.udp { "udp" } else { "tcp" }] = json!(true);
    let optional = [
        ("reverse", p.reverse && !p.bidir, json!(true)),
        ("bidirectional", p.bidir, json!(true)),
        ("bandwidth", p.rate > 0, json!(p.rate)),
        ("window", p.window > 0, json!(p.window)),
        ("MSS", p.mss > 0, json!(p.mss)),
        ("nodelay", p.nodelay, json!(true)),
        ("TOS", p.tos > 0, json!(p.tos)),
        ("udp_counters_64bit", p.udp64, json!(1)),
    ];
    for (k, on, val) in optional {
        if on {
            v[k] = val;
        }
    }
    if let Some(cc) = &p.congestion {
        v["congestion"] = json!(cc);
    }
    v
}

/// Waits until `-t` has passed or `-n` bytes have arrived (or gone, forward; both, each way,
/// with `--bidir`, whose forward streams would otherwise end the test while the server's are
/// still sending), cutting intervals meanwhile; the server must stay silent. A `-n` test whose
/// data stops arriving (lost datagrams never come) ends once it has been quiet for `QUIET`.
fn watch(
    ctrl: &mut TcpStream,
    p: &Params,
    shared: &Shared,
    started: Instant,
    sampler: &mut Sampler,
    each: &mut dyn FnMut(Event),
) -> Result<(), TestError> {
    let run_for = Duration::from_secs(p.time + p.omit);
    let (mut last_moved, mut last_change) = (0, started);
    loop {
        let way = |server_sends: bool| -> u64 {
            (0..shared.counted.len())
                .filter(|&i| p.server_sends(i as u32) == server_sends)
                .map(|i| shared.counted[i].load(Relaxed))
                .sum()
        };
        let moved = if p.bidir {
            way(false).min(way(true))
        } else {
            way(p.reverse)
        };
        let now = Instant::now();
        if moved != last_moved {
            (last_moved, last_change) = (moved, now);
        }
        let quiet = p.bytes > 0 && now.saturating_duration_since(last_change) >= QUIET;
        if (p.time > 0 && now >= started + run_for) || (p.bytes > 0 && moved >= p.bytes) || quiet {
            return Ok(());
        }
        if let Some(iv) = sampler.poll(shared, now) {
            each(Event::Interval(iv));
        }
        let wake = (Instant::now() + TICK).min(sampler.next_at());
        match wire::read_state(ctrl, wake) {
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => return Err(TestError::at("the iperf3 server closed the test")(e)),
            Ok(b) => return Err(TestError::ServerState(b)),
        }
    }
}

/// This end's results message (iperf3's shape): UDP receivers give their lost, total and
/// jitter, UDP senders the datagrams they sent.
fn client_results(p: &Params, near: &[StreamEnd], cpu: (f64, f64, f64), seconds: f64) -> Value {
    let streams: Vec<Value> = near
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let sends = !p.server_sends(i as u32);
            let retransmits = if sends && !p.udp {
                e.retransmits.min(i64::MAX as u64) as i64
            } else {
                -1
            };
            json!({"id": stream_id(i), "bytes": e.bytes, "retransmits": retransmits,
                "jitter": e.jitter_s, "errors": e.lost, "omitted_errors": 0,
                "packets": e.packets, "omitted_packets": 0,
                "start_time": 0, "end_time": seconds})
        })
        .collect();
    let has_retransmits = if p.udp || p.reverse { -1 } else { 1 };
    json!({"cpu_util_total": cpu.0, "cpu_util_user": cpu.1, "cpu_util_system": cpu.2,
        "sender_has_retransmits": has_retransmits, "streams": streams})
}
