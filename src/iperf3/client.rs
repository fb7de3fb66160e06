//! The client side: drives a stock iperf3 server (`iperf3 -s`) through the same exchange the
//! server side answers (see `session`), with fathom's stream threads on this end, and returns
//! both ends: this end's counts, TCP_INFO and CPU, and the far end's results as iperf3 sent them.

use super::params::Params;
use super::results::{cpu_percent, stream_id};
use super::stream::{self, Shared, Sock, StreamEnd};
use super::wire::{self, State, COOKIE_LEN};
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

/// Both ends of a finished test.
pub struct Both {
    /// What ran.
    pub params: Params,
    /// This end's counts per stream.
    pub near: Vec<StreamEnd>,
    /// This end's CPU (total, user, system), % of the test's wall time.
    pub near_cpu: (f64, f64, f64),
    /// The server's results message, as it sent it.
    pub far: Value,
    /// Seconds from TEST_RUNNING (after `-O`) to TEST_END.
    pub seconds: f64,
}

/// Runs one test against the iperf3 server at `addr`.
pub fn run(addr: SocketAddr, p: Params) -> Result<Both, String> {
    let mut ctrl = TcpStream::connect_timeout(&addr, STEP)
        .map_err(|e| format!("cannot connect to the iperf3 server {addr}: {e}"))?;
    let cookie = cookie()?;
    ctrl.write_all(&cookie).map_err(|e| e.to_string())?;
    expect(&mut ctrl, State::ParamExchange)?;
    wire::send_json(&mut ctrl, &params_json(&p)).map_err(|e| e.to_string())?;
    expect(&mut ctrl, State::CreateStreams)?;
    let mut socks = Vec::new();
    for _ in 0..p.streams() {
        let mut s = TcpStream::connect_timeout(&addr, STEP).map_err(|e| e.to_string())?;
        s.write_all(&cookie).map_err(|e| e.to_string())?;
        socks.push(Sock::Tcp(s));
    }
    expect(&mut ctrl, State::TestStart)?;
    expect(&mut ctrl, State::TestRunning)?;
    let (cpu0, started) = (stream::thread_cpu_us(), Instant::now());
    let omit_end = started + Duration::from_secs(p.omit);
    let shared = Arc::new(Shared::new(socks.len(), p.bytes, omit_end));
    let threads = stream::spawn(socks, &p, &shared, false);
    let watched = watch(&mut ctrl, &p, &shared, started);
    shared.stop_send.store(true, Relaxed);
    let ended = Instant::now();
    let result = watched
        .and_then(|_| wire::send_state(&mut ctrl, State::TestEnd).map_err(|e| e.to_string()))
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
    let cpu1 = stream::thread_cpu_us();
    let (u, s) = near
        .iter()
        .fold((cpu1.0 - cpu0.0, cpu1.1 - cpu0.1), |a, e| {
            (a.0 + e.cpu_us.0, a.1 + e.cpu_us.1)
        });
    let near_cpu = cpu_percent(u, s, started.elapsed().as_secs_f64());
    let seconds = ended.saturating_duration_since(omit_end).as_secs_f64();
    let mine = client_results(&p, &near, near_cpu, seconds);
    wire::send_json(&mut ctrl, &mine).map_err(|e| e.to_string())?;
    let far = wire::read_json(&mut ctrl, Instant::now() + STEP)
        .map_err(|e| format!("reading the server's results: {e}"))?;
    expect(&mut ctrl, State::DisplayResults)?;
    let _ = wire::send_state(&mut ctrl, State::IperfDone);
    Ok(Both {
        params: p,
        near,
        near_cpu,
        far,
        seconds,
    })
}

/// A fresh cookie: 36 characters of iperf3's alphabet and a NUL.
fn cookie() -> Result<[u8; COOKIE_LEN], String> {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut c = [0u8; COOKIE_LEN];
    let mut f = std::fs::File::open("/dev/urandom").map_err(|e| format!("/dev/urandom: {e}"))?;
    std::io::Read::read_exact(&mut f, &mut c[..COOKIE_LEN - 1]).map_err(|e| e.to_string())?;
    for b in &mut c[..COOKIE_LEN - 1] {
        *b = ALPHABET[usize::from(*b) % 32];
    }
    c[COOKIE_LEN - 1] = 0;
    Ok(c)
}

/// Reads the server's next state, which must be `want`; iperf3's refusals become their text.
fn expect(ctrl: &mut TcpStream, want: State) -> Result<(), String> {
    let b = wire::read_state(ctrl, Instant::now() + STEP)
        .map_err(|e| format!("waiting for {want:?} from the iperf3 server: {e}"))?;
    match State::from_byte(b) {
        Some(s) if s == want => Ok(()),
        Some(State::AccessDenied) => Err("the server is busy running a test".into()),
        Some(State::ServerError) => {
            let mut code = [0u8; 8];
            let _ = wire::read_by(ctrl, &mut code, Instant::now() + STEP);
            let n = i32::from_be_bytes([code[0], code[1], code[2], code[3]]);
            Err(format!(
                "the iperf3 server refused the test (iperf3 error {n})"
            ))
        }
        other => Err(format!(
            "the iperf3 server sent {other:?} (byte {b}) where {want:?} was due"
        )),
    }
}

/// The parameters message, as iperf3 3.12's client writes it.
fn params_json(p: &Params) -> Value {
    let mut v = json!({"tcp": true, "omit": p.omit, "time": p.time, "num": p.bytes,
        "blockcount": 0, "parallel": p.parallel, "len": p.len, "pacing_timer": 1000,
        "client_version": "3.12"});
    if p.reverse {
        v["reverse"] = json!(true);
    }
    if p.bidir {
        v["bidirectional"] = json!(true);
    }
    v
}

/// Waits until `-t` has passed or `-n` bytes have arrived (or gone, forward); the server must
/// stay silent meanwhile.
fn watch(
    ctrl: &mut TcpStream,
    p: &Params,
    shared: &Shared,
    started: Instant,
) -> Result<(), String> {
    let run_for = Duration::from_secs(p.time + p.omit);
    loop {
        let moved: u64 = (0..shared.counted.len())
            .filter(|&i| p.server_sends(i as u32) == p.reverse)
            .map(|i| shared.counted[i].load(Relaxed))
            .sum();
        if (p.time > 0 && started.elapsed() >= run_for) || (p.bytes > 0 && moved >= p.bytes) {
            return Ok(());
        }
        match wire::read_state(ctrl, Instant::now() + TICK) {
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => return Err(format!("the iperf3 server closed the test: {e}")),
            Ok(b) => return Err(format!("the iperf3 server sent state {b} while testing")),
        }
    }
}

/// This end's results message (iperf3's shape).
fn client_results(p: &Params, near: &[StreamEnd], cpu: (f64, f64, f64), seconds: f64) -> Value {
    let streams: Vec<Value> = near
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let sends = !p.server_sends(i as u32);
            json!({"id": stream_id(i), "bytes": e.bytes,
                "retransmits": if sends { e.retransmits as i64 } else { -1 },
                "jitter": 0, "errors": 0, "packets": 0, "start_time": 0, "end_time": seconds})
        })
        .collect();
    json!({"cpu_util_total": cpu.0, "cpu_util_user": cpu.1, "cpu_util_system": cpu.2,
        "sender_has_retransmits": if p.reverse { -1 } else { 1 }, "streams": streams})
}
