//! `fathom stream --iperf3 HOST[:PORT]`: a test against a stock iperf3 server, both ends
//! reported: this end's from fathom (bytes, TCP_INFO, CPU), the far end's from iperf3's results;
//! the run is stored as a fathom run of this end (see `iperf3::client_report`).

use crate::cli::common::StoreArgs;
use crate::cli::stream::StreamArgs;
use crate::iperf3::{client_report, run_client, Both, ClientOptions, Params, DEFAULT_PORT};
use crate::method::Recorder;
use crate::Failure;
use serde_json::{json, Value};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Runs the test, prints both ends (a table, or one JSON document with `--json`) and stores
/// this end's run (`argv`: the command line as typed).
pub fn run(a: &StreamArgs, host: &str, argv: &[String]) -> Result<(), Failure> {
    let c = &a.common;
    if a.zerocopy || a.tls.tls || c.host.is_some() || c.server.is_some() || !c.clients.is_empty() {
        return Err(Failure::Usage(
            "--iperf3: the iperf3 server is the far end; drop HOST, --server, --clients, --tls and --zerocopy".into(),
        ));
    }
    let addr = resolve(host)?;
    let time_s = c.time.map_or(10, |ns| ns.div_ceil(1_000_000_000));
    let p = Params {
        udp: false,
        parallel: c.parallel.clamp(1, 128),
        reverse: a.reverse,
        bidir: a.bidir,
        time: if a.bytes.is_some() { 0 } else { time_s },
        omit: c.omit.div_ceil(1_000_000_000),
        bytes: a.bytes.unwrap_or(0),
        len: a.write.map_or(128 * 1024, |w| w as usize),
        // --rate is fathom's total; iperf3's -b is per stream.
        rate: a
            .rate
            .map_or(0, |r| (r / u64::from(c.parallel.clamp(1, 128))).max(1)),
        window: 0,
        congestion: None,
        mss: 0,
        nodelay: false,
        tos: 0,
        udp64: false,
    };
    let both = run_client(addr, p, &ClientOptions::default(), &mut |_| {})
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    record(&c.store, addr, &both, argv);
    print(addr, &both, c.json);
    Ok(())
}

/// Saves the test as a fathom run of this end (kind `stream` or `udp`, the far end's bytes
/// from its results) in the store `store` names, so that `runs`, `show`, `compare`, `plot`
/// and `doctor --run` read it; a store that cannot be opened is a warning, as for any test.
pub fn record(store: &StoreArgs, addr: SocketAddr, both: &Both, argv: &[String]) {
    let me = both
        .start
        .connected
        .first()
        .map_or_else(|| "fathom".to_string(), |(local, _)| local.ip().to_string());
    let report = client_report(both, &addr.to_string(), &me);
    Recorder::open(store, argv).save(&report, argv, None);
}

/// Prints both ends: a table, or one JSON document with `json`.
pub fn print(addr: SocketAddr, both: &Both, json: bool) {
    crate::stdout::write_stdout(render(addr, both, json).as_bytes());
}

/// Both ends as text: a table, or one JSON document with `json`.
pub fn render(addr: SocketAddr, both: &Both, json: bool) -> String {
    let doc = document(addr, both);
    if json {
        format!("{doc:#}\n")
    } else {
        table(&doc)
    }
}

/// HOST, HOST:PORT or [V6]:PORT; iperf3's port 5201 when none is given.
pub fn resolve(host: &str) -> Result<SocketAddr, Failure> {
    let bad = |e: String| Failure::Usage(format!("--iperf3 {host}: {e}"));
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    let with_port = if host
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        host.to_string()
    } else {
        format!("{host}:{DEFAULT_PORT}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("no address".into()))
}

/// Both ends as one JSON value: `near` is fathom's, `far` the server's results verbatim.
fn document(addr: SocketAddr, b: &Both) -> Value {
    let streams: Vec<Value> = b
        .near
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let sends = !b.params.server_sends(i as u32);
            let mut s = json!({"id": crate::iperf3::stream_id(i),
                "role": if sends { "sender" } else { "receiver" }, "bytes": e.bytes});
            if b.params.udp {
                s["packets"] = json!(e.packets);
                if !sends {
                    s["lost_packets"] = json!(e.lost);
                    s["out_of_order"] = json!(e.out_of_order);
                    s["jitter_ms"] = json!(finite(e.jitter_s * 1e3));
                }
            } else {
                s["retransmits"] = json!(e.retransmits);
                s["tcp_info"] = json!(e.tcp);
            }
            s
        })
        .collect();
    let (sent, received) = b.near.iter().enumerate().fold((0, 0), |(s, r), (i, e)| {
        if b.params.server_sends(i as u32) {
            (s, r + e.bytes)
        } else {
            (s + e.bytes, r)
        }
    });
    json!({"iperf3_server": addr.to_string(), "seconds": b.seconds,
        "protocol": if b.params.udp { "udp" } else { "tcp" },
        "direction": if b.params.bidir { "bidir" } else if b.params.reverse { "reverse" } else { "forward" },
        "near": {"sent_bytes": sent, "received_bytes": received,
            "cpu_percent": {"total": b.near_cpu.0, "user": b.near_cpu.1, "system": b.near_cpu.2},
            "streams": streams},
        "far": b.far})
}

/// The table: one line per end, one per stream.
fn table(d: &Value) -> String {
    let secs = d["seconds"].as_f64().unwrap_or(0.0).max(1e-9);
    let gbps = |bytes: u64| bytes as f64 * 8.0 / secs / 1e9;
    let far_bytes: u64 = d["far"]["streams"]
        .as_array()
        .map_or(0, |s| s.iter().filter_map(|x| x["bytes"].as_u64()).sum());
    let near = &d["near"];
    let (sent, recv) = (
        near["sent_bytes"].as_u64().unwrap_or(0),
        near["received_bytes"].as_u64().unwrap_or(0),
    );
    let mut out = format!(
        "iperf3 server {} ({}), {:.2} s\n  near (fathom):  sent {sent} B, received {recv} B, {:.3} Gbit/s, CPU {:.1}%\n  far (iperf3):   {far_bytes} B, CPU {:.1}%\n",
        d["iperf3_server"].as_str().unwrap_or("?"),
        d["direction"].as_str().unwrap_or("?"),
        secs,
        gbps(sent + recv),
        near["cpu_percent"]["total"].as_f64().unwrap_or(0.0),
        d["far"]["cpu_util_total"].as_f64().unwrap_or(0.0),
    );
    if d["protocol"] == "udp" {
        let far = |k: &str| -> u64 {
            d["far"]["streams"]
                .as_array()
                .map_or(0, |s| s.iter().filter_map(|x| x[k].as_u64()).sum())
        };
        out.push_str(&format!(
            "  far datagrams:  {}, lost {}\n",
            far("packets"),
            far("errors")
        ));
    }
    for s in near["streams"].as_array().into_iter().flatten() {
        if d["protocol"] == "udp" {
            out.push_str(&udp_line(s));
            continue;
        }
        let t = &s["tcp_info"];
        out.push_str(&format!(
            "  stream {}: {} {} B, retransmits {}, rtt {} us, cwnd {}\n",
            s["id"],
            s["role"].as_str().unwrap_or("?"),
            s["bytes"],
            s["retransmits"],
            t["rtt_us"],
            t["snd_cwnd"]
        ));
    }
    out
}

/// A UDP stream's line: datagrams, and on a receiving stream what was lost and the jitter.
fn udp_line(s: &Value) -> String {
    let mut line = format!(
        "  stream {}: {} {} B, {} datagrams",
        s["id"],
        s["role"].as_str().unwrap_or("?"),
        s["bytes"],
        s["packets"]
    );
    if s["role"] == "receiver" {
        line.push_str(&format!(
            ", lost {}, out of order {}, jitter {:.3} ms",
            s["lost_packets"],
            s["out_of_order"],
            s["jitter_ms"].as_f64().unwrap_or(0.0)
        ));
    }
    line.push('\n');
    line
}

/// JSON holds no NaN or infinity.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
