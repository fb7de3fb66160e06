//! One iperf3 test, from the server's side of the control connection:
//!
//! ```text
//! client                               server (fathom)
//!   cookie (37 B)  ───────────────────>
//!                  <─────────────────── PARAM_EXCHANGE
//!   len + params JSON ────────────────>   (or SERVER_ERROR + i_errno, errno)
//!                  <─────────────────── CREATE_STREAMS
//!   streams: TCP connect + cookie, or UDP hello "9876" <-> "6789"
//!                  <─────────────────── TEST_START, TEST_RUNNING
//!   ... data ...
//!   TEST_END       ───────────────────>
//!                  <─────────────────── EXCHANGE_RESULTS
//!   len + client results ─────────────>
//!                  <─────────────────── len + server results, DISPLAY_RESULTS
//!   IPERF_DONE     ───────────────────>
//! ```
//! Every step has a deadline; a peer that misses one, closes, or sends anything unexpected
//! ends the test and frees its streams.

use super::auth::Auth;
use super::error::TestError;
use super::interval::{Tick, Ticker};
use super::job::{Shared, StreamEnd};
use super::params::{self, Params};
use super::peer::{self, Peer};
use super::results;
use super::slot::{self, Slot};
use super::stream::{self, Sock};
use super::wire::{self, Control, Refusal, State};
use fathom_engine::measure::cpu::thread_rusage_us;
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long each step of the exchange may take.
const STEP: Duration = Duration::from_secs(10);
/// Past `-t` and `-O`, how long the server waits for TEST_END.
const GRACE: Duration = Duration::from_secs(15);

/// What a finished test measured on fathom's end.
pub struct Outcome {
    /// The client's parameters.
    pub params: Params,
    /// Per stream, fathom's counts.
    pub ends: Vec<StreamEnd>,
    /// Seconds from TEST_RUNNING (after `-O`) to TEST_END.
    pub seconds: f64,
    /// CPU (total, user, system), % of wall time.
    pub cpu: (f64, f64, f64),
    /// Seconds from TEST_RUNNING to the results sent (the CPU figures' wall time).
    pub wall_s: f64,
    /// When TEST_RUNNING was sent, Unix seconds.
    pub started_unix_s: f64,
    /// What the client's results say: its bytes, retransmits, datagrams and CPU.
    pub peer: Peer,
    /// The congestion control of fathom's end (as asked for; `None`: the host's default).
    pub congestion: Option<String>,
    /// fathom's end, once a second.
    pub ticks: Vec<Tick>,
    /// The host's CPU ticks over the CPU figures' wall time.
    pub host: results::HostTicks,
}

/// What the session needs from the listener.
pub struct Ctx {
    /// The iperf3 port (UDP streams bind it too).
    pub addr: SocketAddr,
    /// The test slot (set to collecting while the client connects its streams).
    pub slot: Arc<Mutex<Slot>>,
    /// The longest test accepted, ns.
    pub max_duration_ns: u64,
    /// iperf3's RSA authentication, when the agent requires it.
    pub auth: Option<Arc<Auth>>,
    /// Whether the test's data streams are opened; without them (the fuzz target's seam) the
    /// control exchange runs alone, with no stream to count.
    pub data: bool,
}

/// Runs one test on an accepted control connection whose cookie has been read.
pub fn run(
    mut ctrl: impl Control,
    cookie: [u8; wire::COOKIE_LEN],
    ctx: &Ctx,
    test: usize,
) -> Result<Outcome, TestError> {
    wire::send_state(&mut ctrl, State::ParamExchange).map_err(e("sending PARAM_EXCHANGE"))?;
    let p = match read_params(&mut ctrl, ctx) {
        Ok(p) => p,
        Err((r, why)) => {
            let _ = wire::send_refusal(&mut ctrl, r);
            return Err(why);
        }
    };
    let socks = open_streams(&mut ctrl, &p, cookie, ctx)?;
    if let Err(r) = configure(&socks, &p) {
        let _ = wire::send_refusal(&mut ctrl, r);
        return Err(TestError::SocketOptions(r));
    }
    wire::send_state(&mut ctrl, State::TestStart).map_err(e("sending TEST_START"))?;
    wire::send_state(&mut ctrl, State::TestRunning).map_err(e("sending TEST_RUNNING"))?;
    let (cpu0, mut host) = (thread_rusage_us(), results::HostTicks::begin());
    let started = Instant::now();
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let shared = Arc::new(Shared::new(
        socks.len(),
        p.bytes,
        started + Duration::from_secs(p.omit),
    ));
    let mut ticker = Ticker::new(test, fds(&socks, &p), started);
    let threads = stream::spawn(socks, &p, &shared, true);
    let limit = if p.time > 0 {
        Duration::from_secs(p.time + p.omit) + GRACE
    } else {
        Duration::from_nanos(ctx.max_duration_ns) + GRACE
    };
    let outcome = finish(
        &mut ctrl,
        &p,
        &shared,
        threads,
        (started, limit),
        &mut ticker,
    );
    let (ends, seconds, peer) = outcome?;
    let cpu1 = thread_rusage_us();
    host.finish();
    let (u, s) = results::cpu_used(cpu0, cpu1, &ends);
    let wall_s = started.elapsed().as_secs_f64();
    let cpu = results::cpu_percent(u, s, wall_s);
    let msg = results::server_results(&p, &ends, cpu, seconds, p.congestion.as_deref());
    wire::send_json(&mut ctrl, &msg).map_err(e("sending the results"))?;
    wire::send_state(&mut ctrl, State::DisplayResults).map_err(e("sending DISPLAY_RESULTS"))?;
    let _ = wire::read_state(&mut ctrl, Instant::now() + STEP);
    Ok(Outcome {
        congestion: p.congestion.clone(),
        params: p,
        ends,
        seconds,
        cpu,
        wall_s,
        started_unix_s,
        peer,
        ticks: ticker.ticks,
        host,
    })
}

/// Reads the client's parameters and, with RSA authentication on, admits the client before
/// anything else is looked at; the error is the code to send and what the log says.
fn read_params(ctrl: &mut impl Control, ctx: &Ctx) -> Result<Params, (Refusal, TestError)> {
    let v = wire::read_json(ctrl, Instant::now() + STEP)
        .map_err(|err| (Refusal::RecvParams, e("reading the parameters")(err)))?;
    if let Some(auth) = &ctx.auth {
        let token = v.get("authtoken").and_then(serde_json::Value::as_str);
        let user = auth
            .admit(token, unix_now_s())
            .map_err(|d| (Refusal::AuthTest, TestError::NotAuthorized(d)))?;
        eprintln!("fathom serve: iperf3 client authenticated as {user:?}");
    }
    let p = params::parse(&v).and_then(|p| check(p, ctx.max_duration_ns));
    p.map_err(|r| (r, TestError::Params(r)))
}

/// This host's clock, Unix seconds.
fn unix_now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Names the step an I/O error happened in.
fn e(what: &'static str) -> impl FnOnce(std::io::Error) -> TestError {
    TestError::at(what)
}

/// Checks what depends on this host: the agent's longest test, the congestion control.
fn check(p: Params, max_duration_ns: u64) -> Result<Params, Refusal> {
    if (p.time + p.omit).saturating_mul(1_000_000_000) > max_duration_ns {
        return Err(Refusal::Duration);
    }
    if let Some(cc) = &p.congestion {
        fathom_engine::sockopt::check_cc(cc).map_err(|_| Refusal::SetCongestion)?;
    }
    Ok(p)
}

/// Asks for the streams and takes them as they arrive, before a deadline.
fn open_streams(
    ctrl: &mut impl Control,
    p: &Params,
    cookie: [u8; wire::COOKIE_LEN],
    ctx: &Ctx,
) -> Result<Vec<Sock>, TestError> {
    let n = p.streams() as usize;
    let deadline = Instant::now() + STEP;
    if !ctx.data {
        wire::send_state(ctrl, State::CreateStreams)?;
        return Ok(Vec::new());
    }
    if p.udp {
        let mut next = super::udp::listener(ctx.addr).map_err(e("UDP port"))?;
        wire::send_state(ctrl, State::CreateStreams)?;
        let mut socks = Vec::with_capacity(n);
        for _ in 0..n {
            let (s, listener) =
                super::udp::accept(next, deadline).map_err(e("waiting for UDP streams"))?;
            socks.push(Sock::Udp(s));
            next = listener;
        }
        return Ok(socks);
    }
    let rx: Receiver<(u64, TcpStream)> = slot::collect(&ctx.slot, cookie, n);
    wire::send_state(ctrl, State::CreateStreams)?;
    let mut arrived = Vec::with_capacity(n);
    while arrived.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(a) => arrived.push(a),
            Err(_) => {
                return Err(TestError::Streams {
                    arrived: arrived.len(),
                    wanted: n,
                })
            }
        }
    }
    slot::hold(&ctx.slot);
    // In the client's order: with --bidir the first half sends and the second receives.
    arrived.sort_by_key(|(seq, _)| *seq);
    Ok(arrived.into_iter().map(|(_, s)| Sock::Tcp(s)).collect())
}

/// Applies `-w`, `-C`, `-M`, `-N` and `-S` to the streams.
fn configure(socks: &[Sock], p: &Params) -> Result<(), Refusal> {
    for s in socks {
        let (sock, tcp) = match s {
            Sock::Tcp(t) => (socket2::SockRef::from(t), true),
            Sock::Udp(u) => (socket2::SockRef::from(u), false),
        };
        if p.window > 0 {
            sock.set_send_buffer_size(p.window as usize)
                .map_err(|_| Refusal::BufSize)?;
            sock.set_recv_buffer_size(p.window as usize)
                .map_err(|_| Refusal::BufSize)?;
        }
        if p.tos > 0 {
            let _ = sock.set_tos(u32::from(p.tos));
        }
        if !tcp {
            continue;
        }
        if let Some(cc) = &p.congestion {
            sock.set_tcp_congestion(cc.as_bytes())
                .map_err(|_| Refusal::SetCongestion)?;
        }
        if p.mss > 0 {
            let _ = sock.set_mss(p.mss);
        }
        if p.nodelay {
            let _ = sock.set_nodelay(true);
        }
    }
    Ok(())
}

/// Per stream: whether this end sends, and its TCP descriptor for TCP_INFO.
fn fds(socks: &[Sock], p: &Params) -> Vec<(bool, Option<std::os::fd::RawFd>)> {
    use std::os::fd::AsRawFd;
    let tcp = |s: &Sock| match s {
        Sock::Tcp(t) => Some(t.as_raw_fd()),
        Sock::Udp(_) => None,
    };
    socks
        .iter()
        .enumerate()
        .map(|(i, s)| (p.server_sends(i as u32), tcp(s)))
        .collect()
}

/// Reads the client's next state before `deadline`, logging an interval whenever one is due.
fn wait_state(
    ctrl: &mut impl Control,
    deadline: Instant,
    ticker: &mut Ticker,
    shared: &Shared,
) -> std::io::Result<u8> {
    loop {
        let slice = ticker.next_at().min(deadline);
        match wire::read_state(ctrl, slice) {
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut && slice < deadline => {
                ticker.tick(shared)
            }
            r => return r,
        }
    }
}

/// Waits for TEST_END, swaps results, and collects every stream's end; on any failure the
/// streams are stopped and joined before the error returns.
fn finish(
    ctrl: &mut impl Control,
    p: &Params,
    shared: &Arc<Shared>,
    threads: Vec<JoinHandle<StreamEnd>>,
    (started, limit): (Instant, Duration),
    ticker: &mut Ticker,
) -> Result<(Vec<StreamEnd>, f64, Peer), TestError> {
    use std::sync::atomic::Ordering::Relaxed;
    let join = |threads: Vec<JoinHandle<StreamEnd>>| -> Vec<StreamEnd> {
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .collect()
    };
    let abort = |threads, why: TestError| {
        shared.stop_send.store(true, Relaxed);
        shared.abort.store(true, Relaxed);
        join(threads);
        Err(why)
    };
    let st = wait_state(ctrl, started + limit, ticker, shared);
    if st.is_ok() {
        ticker.tick(shared);
    }
    let ended = Instant::now();
    shared.stop_send.store(true, Relaxed);
    match st.map(State::from_byte) {
        Ok(Some(State::TestEnd)) => {}
        Ok(Some(State::ClientTerminate)) => return abort(threads, TestError::Interrupted),
        Ok(other) => return abort(threads, TestError::ClientState(other)),
        Err(err) => return abort(threads, e("waiting for TEST_END")(err)),
    }
    if let Err(err) = wire::send_state(ctrl, State::ExchangeResults) {
        return abort(threads, e("sending EXCHANGE_RESULTS")(err));
    }
    let client = match wire::read_json(ctrl, Instant::now() + STEP) {
        Ok(v) => v,
        Err(err) => return abort(threads, e("reading the client's results")(err)),
    };
    let client = Peer::read(&peer::bounded(client), threads.len());
    for (i, b) in client.bytes().iter().enumerate() {
        shared.targets[i].store(*b, Relaxed);
    }
    shared.drain.store(true, Relaxed);
    let window_start = started + Duration::from_secs(p.omit);
    let seconds = ended.saturating_duration_since(window_start).as_secs_f64();
    Ok((join(threads), seconds, client))
}
