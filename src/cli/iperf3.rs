//! `fathom iperf3 ARGS…`: iperf3's own command line (its common flags, with their meanings),
//! for the scripts people already have. `-c HOST` drives an iperf3 server as `stream
//! --iperf3` and `udp --iperf3` do; `-s` answers iperf3 clients as `serve --iperf3` does.
//! Checked here before any socket opens; unknown flags are clap's usage errors (exit 2).

use super::units::parse_size;
use fathom_iperf3::MAX_OMIT;
use std::net::IpAddr;
use std::path::PathBuf;

/// iperf3's longest `-t`, a day.
const MAX_TIME: u64 = 86_400;
/// iperf3's longest `-i`, a minute.
const MAX_INTERVAL: f64 = 60.0;
/// The longest `--connect-timeout`, ms.
const MAX_CONNECT_MS: u64 = 600_000;

/// `fathom iperf3 -c HOST | -s`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Sizes (-n, -l, -w) take K/M/G, 1024-based; -b takes K/M/G, 1000-based bits per second.
-J prints a document in iperf3 3.12's shape, fathom's own figures under `extensions`.
Unlike iperf3, -s listens on loopback unless --iperf3-open (iperf3's protocol has no key).

Examples:
  fathom iperf3 -c HOST -P 4 -t 10 -J     four TCP streams, iperf3's JSON
  fathom iperf3 -c HOST -u -b 100M -l 1400 -R
  fathom iperf3 -s -p 5201                answer iperf3 clients on loopback")]
pub struct Iperf3Args {
    /// Run as a client of the iperf3 server at HOST.
    #[arg(
        short = 'c',
        long = "client",
        value_name = "HOST",
        conflicts_with = "server"
    )]
    pub client: Option<String>,
    /// Run as a server (answers stock iperf3 clients, one test at a time).
    #[arg(short = 's', long = "server")]
    pub server: bool,
    /// The server's port.
    #[arg(short = 'p', long = "port", default_value_t = fathom_iperf3::DEFAULT_PORT)]
    pub port: u16,
    /// Parallel streams (1 to 128).
    #[arg(short = 'P', long = "parallel", default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(fathom_iperf3::MAX_PARALLEL)))]
    pub parallel: u32,
    /// Seconds to transmit (default 10).
    #[arg(short = 't', long = "time", value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..=MAX_TIME))]
    pub time: Option<u64>,
    /// Bytes to transmit instead of a time.
    #[arg(short = 'n', long = "bytes", value_name = "SIZE", value_parser = parse_size, conflicts_with = "time")]
    pub bytes: Option<u64>,
    /// Reverse: the server sends.
    #[arg(short = 'R', long = "reverse", conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once.
    #[arg(long = "bidir")]
    pub bidir: bool,
    /// UDP rather than TCP.
    #[arg(short = 'u', long = "udp")]
    pub udp: bool,
    /// Bits per second per stream (UDP's default 1M; TCP unlimited).
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", value_parser = parse_bitrate)]
    pub bitrate: Option<u64>,
    /// Bytes per write (TCP, default 128K) or per datagram (UDP, default 1460).
    #[arg(short = 'l', long = "length", value_name = "SIZE", value_parser = parse_size)]
    pub length: Option<u64>,
    /// Socket buffer size, both ends.
    #[arg(short = 'w', long = "window", value_name = "SIZE", value_parser = parse_size)]
    pub window: Option<u64>,
    /// TCP congestion control, both ends.
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    pub congestion: Option<String>,
    /// TCP maximum segment size.
    #[arg(short = 'M', long = "set-mss", value_name = "N")]
    pub mss: Option<u32>,
    /// TCP_NODELAY.
    #[arg(short = 'N', long = "no-delay")]
    pub nodelay: bool,
    /// Seconds left out at the start.
    #[arg(short = 'O', long = "omit", default_value_t = 0, value_name = "N",
        value_parser = clap::value_parser!(u64).range(0..=MAX_OMIT))]
    pub omit: u64,
    /// Zero-copy sends (refused: this client copies from memory).
    #[arg(short = 'Z', long = "zerocopy")]
    pub zerocopy: bool,
    /// Pin this end's threads to CPU N (iperf3's `-A n`; the server's `,m` is refused).
    #[arg(short = 'A', long = "affinity", value_name = "N")]
    pub affinity: Option<String>,
    /// Print iperf3's JSON document.
    #[arg(short = 'J', long = "json")]
    pub json: bool,
    /// A JSON line per event as it happens: start, each interval, end (iperf3 3.13's).
    #[arg(long = "json-stream")]
    pub json_stream: bool,
    /// Seconds between intervals (0: none).
    #[arg(
        short = 'i',
        long = "interval",
        default_value_t = 1.0,
        value_name = "SECONDS"
    )]
    pub interval: f64,
    /// Append the output to FILE instead of printing it.
    #[arg(long = "logfile", value_name = "FILE")]
    pub logfile: Option<PathBuf>,
    /// How long connecting may take, ms (default 10000).
    #[arg(long = "connect-timeout", value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..=MAX_CONNECT_MS))]
    pub connect_timeout: Option<u64>,
    /// 64-bit UDP sequence numbers.
    #[arg(long = "udp-counters-64bit")]
    pub udp_counters_64bit: bool,
    /// The server's address (-s; loopback by default).
    #[arg(short = 'B', long = "bind", value_name = "ADDR")]
    pub bind: Option<IpAddr>,
    /// Let -s listen beyond loopback without a key (iperf3's protocol has none).
    #[arg(long = "iperf3-open", requires = "server")]
    pub iperf3_open: bool,
}

/// What the iperf3-shaped command line may not be; each names its flag or its value.
#[derive(Debug, thiserror::Error)]
pub enum Iperf3ArgsError {
    /// `-b RATE/BURST`.
    #[error("'{0}': burst rates (RATE/BURST) are not supported")]
    Burst(String),
    /// `-b` is not a rate.
    #[error(transparent)]
    Rate(#[from] fathom_units::Refusal),
    /// `-Z`.
    #[error("-Z: not supported: this client copies from memory (fathom stream --zerocopy sends with sendfile)")]
    Zerocopy,
    /// `-i` outside 0 or 0.1 to [`MAX_INTERVAL`] s.
    #[error("-i: {0} s; give 0 (no intervals) or 0.1 to {MAX_INTERVAL}")]
    Interval(f64),
    /// Neither `-c` nor `-s`.
    #[error("must either be a client (-c HOST) or a server (-s)")]
    NoRole,
    /// `-s` with flags of a client, named.
    #[error("-s: {} apply to a client (-c) only", .0.join(", "))]
    ClientFlags(Vec<&'static str>),
    /// `-A n,m`.
    #[error("-A {0}: the server's CPU (,m) is not supported; give this end's CPU alone")]
    ServerCpu(String),
    /// `-A` is not a CPU number.
    #[error("-A {0}: not a CPU number")]
    NotACpu(String),
}

/// A bit rate as iperf3 writes one: "100M", "1G", "500k" (1000-based); "0" for no limit.
fn parse_bitrate(s: &str) -> Result<u64, Iperf3ArgsError> {
    if s.contains('/') {
        return Err(Iperf3ArgsError::Burst(s.into()));
    }
    if s == "0" {
        return Ok(0);
    }
    Ok(fathom_units::rate::parse(s)?)
}

impl Iperf3Args {
    /// Checks what clap cannot: one role, the flags of the other role, and refused flags.
    pub fn validate(&self) -> Result<(), Iperf3ArgsError> {
        if self.zerocopy {
            return Err(Iperf3ArgsError::Zerocopy);
        }
        if !(self.interval == 0.0 || (0.1..=MAX_INTERVAL).contains(&self.interval)) {
            return Err(Iperf3ArgsError::Interval(self.interval));
        }
        match (&self.client, self.server) {
            (None, false) => Err(Iperf3ArgsError::NoRole),
            (Some(_), _) => self.affinity_cpu().map(|_| ()),
            (None, true) => {
                let given = self.client_flags_given();
                if given.is_empty() {
                    Ok(())
                } else {
                    Err(Iperf3ArgsError::ClientFlags(given))
                }
            }
        }
    }

    /// `-A N`: the CPU this end's threads run on.
    pub fn affinity_cpu(&self) -> Result<Option<usize>, Iperf3ArgsError> {
        let Some(a) = &self.affinity else {
            return Ok(None);
        };
        if a.contains(',') {
            return Err(Iperf3ArgsError::ServerCpu(a.clone()));
        }
        let max = usize::try_from(libc::CPU_SETSIZE).unwrap_or(1024);
        match a.parse::<usize>() {
            Ok(n) if n < max => Ok(Some(n)),
            _ => Err(Iperf3ArgsError::NotACpu(a.clone())),
        }
    }

    /// The client-only flags given (with -s they are a mistake).
    fn client_flags_given(&self) -> Vec<&'static str> {
        [
            (self.parallel != 1, "-P"),
            (self.time.is_some(), "-t"),
            (self.bytes.is_some(), "-n"),
            (self.reverse, "-R"),
            (self.bidir, "--bidir"),
            (self.udp, "-u"),
            (self.bitrate.is_some(), "-b"),
            (self.length.is_some(), "-l"),
            (self.window.is_some(), "-w"),
            (self.congestion.is_some(), "-C"),
            (self.mss.is_some(), "-M"),
            (self.nodelay, "-N"),
            (self.omit != 0, "-O"),
            (self.affinity.is_some(), "-A"),
            (self.json, "-J"),
            (self.json_stream, "--json-stream"),
            (self.logfile.is_some(), "--logfile"),
            (self.connect_timeout.is_some(), "--connect-timeout"),
            (self.udp_counters_64bit, "--udp-counters-64bit"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }
}
