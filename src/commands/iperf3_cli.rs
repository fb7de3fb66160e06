//! `fathom iperf3 ARGS…`: iperf3's command line mapped onto fathom. `-c HOST` runs the client
//! (`stream --iperf3`, or `udp --iperf3` with `-u`) and prints intervals as they are cut, then
//! fathom's report of the run (its terminal table), or with `-J` one document in iperf3's shape
//! (fathom-iperf3's `json`), or with `--json-stream` a JSON line per event (start, each interval, end)
//! as it happens; `-s` answers
//! iperf3 clients as `serve --iperf3` does, until the process ends.

use super::iperf3_client::report;
use crate::cli::iperf3::Iperf3Args;
use crate::Failure;
use fathom_iperf3::{
    ClientOptions, Event, Interval, Intervals, Params, Server, Target, MAX_MSS, MAX_TCP_LEN,
    MAX_UDP_LEN, MAX_WINDOW, MIN_UDP_LEN,
};
use fathom_report::table::Table;
use fathom_report::Exporter;
use serde_json::{json, Value};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// The longest test `-s` accepts, as `fathom serve`'s default `--max-duration`.
const SERVER_MAX_NS: u64 = 3_600_000_000_000;
/// `-i 0`: no interval is cut within a test.
const NO_INTERVALS: Duration = Duration::from_secs(10 * 86_400);

/// Runs the client or the server.
pub fn run(a: &Iperf3Args) -> Result<(), Failure> {
    a.validate().map_err(|e| Failure::Usage(e.to_string()))?;
    match &a.client {
        Some(host) => client(a, host),
        None => server(a),
    }
}

/// Where the output goes: stdout, or appended to `--logfile`.
struct Out(Option<std::fs::File>);

impl Out {
    fn open(a: &Iperf3Args) -> Result<Out, Failure> {
        let Some(path) = &a.logfile else {
            return Ok(Out(None));
        };
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map(|f| Out(Some(f)))
            .map_err(|e| Failure::Runtime(format!("--logfile {}: {e}", path.display())))
    }

    fn write(&mut self, s: &str) {
        match &mut self.0 {
            Some(f) => {
                let _ = f.write_all(s.as_bytes());
            }
            None => crate::stdout::write_stdout(s.as_bytes()),
        }
    }
}

/// `-c HOST`: one test, then its output.
fn client(a: &Iperf3Args, host: &str) -> Result<(), Failure> {
    let p = params(a)?;
    let mut out = Out::open(a)?;
    let addr = (host, a.port)
        .to_socket_addrs()
        .map_err(|e| Failure::Usage(format!("-c {host}: {e}")))?
        .next()
        .ok_or_else(|| Failure::Usage(format!("-c {host}: no address")))?;
    if let Some(cpu) = a
        .affinity_cpu()
        .map_err(|e| Failure::Usage(e.to_string()))?
    {
        pin(cpu)?;
    }
    let o = ClientOptions {
        connect_timeout: Duration::from_millis(a.connect_timeout.unwrap_or(10_000)),
        interval: if a.interval == 0.0 {
            NO_INTERVALS
        } else {
            Duration::from_secs_f64(a.interval)
        },
    };
    let mode = Mode::of(a);
    if mode == Mode::Text {
        out.write(&format!("Connecting to host {host}, port {}\n", a.port));
    }
    let target = Target { host, port: a.port };
    let (sent, mut cut) = (p.clone(), Intervals::default());
    let mut each = |ev: Event| match (mode, ev) {
        (Mode::Text, Event::Interval(iv)) => out.write(&interval_line(iv)),
        (Mode::Stream, Event::Started(s)) => out.write(&event(
            "start",
            fathom_iperf3::json_start(&sent, s, &target),
        )),
        (Mode::Stream, Event::Interval(iv)) => out.write(&event("interval", cut.next(&sent, iv))),
        _ => {}
    };
    let result = fathom_iperf3::run_client(addr, p, &o, &mut each);
    let text = match (&result, mode) {
        (Ok(both), Mode::Text) => {
            String::from_utf8_lossy(&Table.export(&report(addr, both))).into_owned()
        }
        (Ok(both), Mode::Json) => format!("{:#}\n", fathom_iperf3::json_document(both, &target)),
        (Ok(both), Mode::Stream) => event("end", fathom_iperf3::json_end(both)),
        (Err(e), Mode::Json) => format!("{:#}\n", fathom_iperf3::error_document(&e.to_string())),
        (Err(e), Mode::Stream) => event("error", json!(e.to_string())),
        (Err(_), Mode::Text) => String::new(),
    };
    out.write(&text);
    result
        .map(|_| ())
        .map_err(|e| Failure::Runtime(e.to_string()))
}

/// How the client's output is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A line per interval, then the run's table (fathom's report).
    Text,
    /// One document at the end (`-J`).
    Json,
    /// A JSON line per event as it happens (`--json-stream`, iperf3 3.13's).
    Stream,
}

impl Mode {
    fn of(a: &Iperf3Args) -> Mode {
        match (a.json_stream, a.json) {
            (true, _) => Mode::Stream,
            (false, true) => Mode::Json,
            (false, false) => Mode::Text,
        }
    }
}

/// One `--json-stream` line: `{"event": NAME, "data": DATA}`.
fn event(name: &str, data: Value) -> String {
    format!("{}\n", json!({"event": name, "data": data}))
}

/// One interval as iperf3 prints its sum line.
fn interval_line(iv: &Interval) -> String {
    let bytes: u64 = iv.bytes.iter().sum();
    let secs = (iv.end - iv.start).max(1e-9);
    format!(
        "[SUM] {:6.2}-{:<6.2} sec  {:>10} Bytes  {:8.3} Gbits/sec{}\n",
        iv.start,
        iv.end,
        bytes,
        bytes as f64 * 8.0 / secs / 1e9,
        if iv.omitted { "  (omitted)" } else { "" }
    )
}

/// The flags as the parameters the server is sent; each bounded as iperf3 bounds it.
fn params(a: &Iperf3Args) -> Result<Params, Failure> {
    let bad = |m: String| Failure::Usage(m);
    let len = a.length.unwrap_or(if a.udp { 1460 } else { 128 * 1024 });
    if a.udp && !(MIN_UDP_LEN..=MAX_UDP_LEN).contains(&len) {
        return Err(bad(format!(
            "-l {len}: UDP datagrams hold {MIN_UDP_LEN} to {MAX_UDP_LEN} bytes"
        )));
    }
    if !a.udp && !(1..=MAX_TCP_LEN).contains(&len) {
        return Err(bad(format!("-l {len}: 1 byte to 1M")));
    }
    let window = a.window.unwrap_or(0);
    if window > MAX_WINDOW {
        return Err(bad(format!("-w {window}: at most 512M")));
    }
    if let Some(mss) = a.mss.filter(|&m| u64::from(m) > MAX_MSS) {
        return Err(bad(format!("-M {mss}: at most {MAX_MSS}")));
    }
    if let Some(cc) = &a.congestion {
        fathom_engine::sockopt::check_cc(cc).map_err(|e| bad(format!("-C: {e}")))?;
    }
    let bytes = a.bytes.unwrap_or(0);
    Ok(Params {
        udp: a.udp,
        parallel: a.parallel,
        reverse: a.reverse,
        bidir: a.bidir,
        time: if bytes > 0 { 0 } else { a.time.unwrap_or(10) },
        omit: a.omit,
        bytes,
        len: len as usize,
        rate: a.bitrate.unwrap_or(if a.udp {
            super::iperf3_udp::DEFAULT_RATE
        } else {
            0
        }),
        window: window as u32,
        congestion: a.congestion.clone(),
        mss: a.mss.unwrap_or(0),
        nodelay: a.nodelay,
        tos: 0,
        udp64: a.udp_counters_64bit,
    })
}

/// `-A N`: this thread, and so every stream thread it starts, runs on CPU `cpu`.
fn pin(cpu: usize) -> Result<(), Failure> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays within it (cpu < CPU_SETSIZE, checked in
    // validation), and sched_setaffinity reads it.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Failure::Usage(format!("-A {cpu}: {e}")));
    }
    Ok(())
}

/// `-s`: answers iperf3 clients on loopback (or `-B`'s address with `--iperf3-open`) until
/// the process ends.
fn server(a: &Iperf3Args) -> Result<(), Failure> {
    let ip = a.bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if !ip.is_loopback() && !a.iperf3_open {
        return Err(Failure::Usage(format!(
            "-B {ip}: listening beyond loopback needs --iperf3-open (iperf3's protocol has no key)"
        )));
    }
    let addr = SocketAddr::new(ip, a.port);
    let server = Server::bind(addr, SERVER_MAX_NS)
        .map_err(|e| Failure::Runtime(format!("-s: cannot listen on {addr}: {e}")))?;
    let bound = server
        .local_addr()
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    eprintln!("fathom iperf3: iperf3 clients on {bound}");
    crate::stdout::write_stdout(format!("Server listening on {}\n", bound.port()).as_bytes());
    server.serve();
    Ok(())
}
