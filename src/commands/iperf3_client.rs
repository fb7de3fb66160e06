//! `fathom stream --iperf3 HOST[:PORT]`: a test against a stock iperf3 server, reported and
//! stored as any fathom run (table, `--json` result document, `--csv`): this end's figures from
//! fathom (bytes, TCP_INFO, CPU), the far end's from iperf3's results (see
//! `fathom_iperf3::client_report`).

use super::output::{self, Format};
use crate::cli::common::StoreArgs;
use crate::cli::stream::StreamArgs;
use crate::method::Recorder;
use crate::Failure;
use fathom_iperf3::{client_report, run_client, Both, ClientOptions, Params, DEFAULT_PORT};
use fathom_report::Report;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Runs the test, stores its run and prints it (`argv`: the command line as typed).
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
    finish(&c.store, addr, &both, argv, Format::of(c.json, c.csv));
    Ok(())
}

/// This end's test as a fathom run (kind `stream` or `udp`): fathom's figures of what it sent
/// and received, the server's from its results where they belong (`fathom_iperf3::client_report`).
pub fn report(addr: SocketAddr, both: &Both) -> Report {
    let me = both
        .start
        .connected
        .first()
        .map_or_else(|| "fathom".to_string(), |(local, _)| local.ip().to_string());
    client_report(both, &addr.to_string(), &me)
}

/// Saves the run in the store `store` names, so that `runs`, `show`, `compare`, `plot` and
/// `doctor --run` read it (a store that cannot be opened is a warning, as for any test), and
/// prints it in `format`: with `--json` the schema-2 result document any test prints, which
/// `fathom show ID --json` prints again.
pub fn finish(store: &StoreArgs, addr: SocketAddr, both: &Both, argv: &[String], format: Format) {
    let report = report(addr, both);
    Recorder::open(store, argv).save(&report, argv, None);
    output::print(&report, format);
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
