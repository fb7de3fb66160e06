//! `fathom udp --iperf3 HOST[:PORT]`: a UDP test against a stock iperf3 server. This end sends
//! or receives datagrams with iperf3's header (seconds, microseconds, sequence number) and
//! counts them as a fathom udp test does; the far end's lost, total and jitter come from
//! iperf3's result exchange. The run is stored and printed as `stream --iperf3`'s is.

use super::iperf3_client::{finish, resolve};
use super::output::Format;
use crate::cli::udp::UdpArgs;
use crate::Failure;
use fathom_iperf3::{run_client, ClientOptions, Params, MAX_UDP_LEN, MIN_UDP_LEN};

/// iperf3's UDP rate when `-b` is not given: 1 Mbit/s per stream.
pub const DEFAULT_RATE: u64 = 1_000_000;

/// Runs the test, stores its run and prints it (a table, `--json` or `--csv`).
pub fn run(a: &UdpArgs, host: &str, argv: &[String]) -> Result<(), Failure> {
    let p = params(a)?;
    let addr = resolve(host)?;
    let both = run_client(addr, p, &ClientOptions::default(), &mut |_| {})
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let format = Format::of(a.common.json, a.common.csv);
    finish(&a.common.store, addr, &both, argv, format);
    Ok(())
}

/// The options as iperf3's parameters; what iperf3 cannot do is a usage error.
fn params(a: &UdpArgs) -> Result<Params, Failure> {
    let c = &a.common;
    let faults = a.test_drop_every.is_some()
        || a.test_duplicate_every.is_some()
        || a.test_swap_every.is_some();
    if a.blast || a.gso || a.pps.is_some() || faults || c.host.is_some() || c.server.is_some() {
        return Err(Failure::Usage(
            "--iperf3: the iperf3 server is the far end; drop HOST, --server, --blast, --gso and --pps (pace with --rate)".into(),
        ));
    }
    if !c.clients.is_empty() {
        return Err(Failure::Usage(
            "--iperf3: one client only; drop --clients".into(),
        ));
    }
    if !(MIN_UDP_LEN..=MAX_UDP_LEN).contains(&a.size) {
        return Err(Failure::Usage(format!(
            "--size: {} bytes; iperf3's datagrams hold {MIN_UDP_LEN} to {MAX_UDP_LEN}",
            a.size
        )));
    }
    let parallel = c.parallel.clamp(1, fathom_iperf3::MAX_PARALLEL);
    // --rate is fathom's total; iperf3's -b is per stream.
    let rate = a
        .rate
        .map_or(DEFAULT_RATE, |r| (r / f64::from(parallel)) as u64)
        .max(1);
    let bytes = match a.count {
        Some(n) => n.checked_mul(a.size).ok_or_else(|| {
            Failure::Usage(format!("-n: {n} datagrams of {} bytes is too many", a.size))
        })?,
        None => 0,
    };
    Ok(Params {
        udp: true,
        parallel,
        reverse: a.reverse,
        bidir: false,
        time: if bytes > 0 {
            0
        } else {
            c.time.map_or(10, |ns| ns.div_ceil(1_000_000_000))
        },
        omit: c.omit.div_ceil(1_000_000_000),
        bytes,
        len: a.size as usize,
        rate,
        window: c.buffer.or(c.rcvbuf).unwrap_or(0),
        congestion: None,
        mss: 0,
        nodelay: false,
        tos: 0,
        udp64: false,
    })
}
