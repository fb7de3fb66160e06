//! `fathom udp`: UDP stream options, validated into a [`TestPlan`].

use super::common::CommonArgs;
use super::error::{ArgsError, Sets, ValueError};
use super::kind::KindArgs;
use super::stream::flows;
use super::units::parse_size;
use fathom_proto::plan::*;
use fathom_proto::udp::{UdpFaults, UdpOptions};

/// Datagrams per sendmmsg/recvmmsg call by default.
pub const DEFAULT_BATCH: u32 = 64;
/// Receive buffer requested by default (unless --buffer or --rcvbuf says otherwise). The
/// receive buffer is what absorbs a burst, or the receiver being off its CPU for a moment; with
/// the kernel's usual 208 KB (about 270 small datagrams) a 64-byte stream on the project's
/// loaded 2-vCPU machine lost 61% and delivered 154k datagrams/s, with 4 MB 4% and 351k/s
/// (bench/RESULTS.md). Clamped to net.core.rmem_max, and then said so.
pub const DEFAULT_RCVBUF: u32 = 4 << 20;

/// `fathom udp [HOST[:PORT]]`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Rates take k/M/G, 1000-based (--rate 1G = 10^9 bits/s of payload); sizes take K/M (1024-based).
The receive buffer is 4M unless --buffer or --rcvbuf says otherwise (clamped to net.core.rmem_max).

Examples:
  fathom udp                              64-byte datagrams as fast as possible, 10 s, loopback
  fathom udp HOST --size 1472 --rate 1G   paced at 1 Gbit/s of payload
  fathom udp HOST --size 64 -P 4 --pps 500k   4 flows sharing 500k datagrams/s
  fathom udp HOST -n 1M                   send exactly 1,000,000 datagrams, then stop
  fathom udp HOST -R --json               the agent sends; one JSON document
  fathom udp HOST --blast                 sender only: the receiver discards without accounting
  fathom udp --iperf3 HOST --rate 100M    against a stock iperf3 server (iperf3 -s)
  fathom udp HOST --gso                   UDP_SEGMENT/UDP_GRO: datagrams, messages and calls apart")]
pub struct UdpArgs {
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Payload bytes per datagram (1 to 65507).
    #[arg(short = 'l', long, default_value = "64", value_parser = parse_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: u64,
    /// Send exactly this many datagrams (per direction, split over the flows) instead of a time.
    #[arg(short = 'n', long, value_parser = parse_count, value_name = "N", allow_hyphen_values = true)]
    pub count: Option<u64>,
    /// Pace at this many payload bits per second in all.
    #[arg(long, value_parser = parse_rate, value_name = "BITS", conflicts_with = "pps", allow_hyphen_values = true)]
    pub rate: Option<f64>,
    /// Pace at this many datagrams per second in all.
    #[arg(long, value_parser = parse_pps, value_name = "N", allow_hyphen_values = true)]
    pub pps: Option<f64>,
    /// Datagrams per sendmmsg/recvmmsg system call (1: one call per datagram).
    #[arg(long, default_value_t = DEFAULT_BATCH, value_name = "N")]
    pub batch: u32,
    /// Reverse: the agent sends.
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// The transmit ceiling alone: the receiver reads and drops in batches, counting datagrams
    /// and bytes but not sequence numbers, duplicates, order or jitter.
    #[arg(long)]
    pub blast: bool,
    /// UDP_SEGMENT on send and UDP_GRO on receive: each message of a call holds up to 64
    /// datagrams, which the kernel cuts apart (or hands up still joined); --batch then counts
    /// messages. The report shows datagrams, messages and system calls apart.
    #[arg(long)]
    pub gso: bool,
    /// Drive a stock iperf3 server (`iperf3 -s`) at HOST[:PORT] (port 5201 by default) instead
    /// of a fathom agent: -P, -t, -n, -R, --rate (iperf3's 1M per stream when absent), --size
    /// and --omit apply; both ends reported.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub iperf3: Option<String>,
    /// Test-only: act as if this kernel had no UDP_SEGMENT.
    #[arg(long, hide = true)]
    pub test_no_gso: bool,
    /// Test-only faults: the sender skips every Nth datagram (counted as sent).
    #[arg(long, hide = true, value_name = "N")]
    pub test_drop_every: Option<u32>,
    /// Test-only faults: the sender sends every Nth datagram twice.
    #[arg(long, hide = true, value_name = "N")]
    pub test_duplicate_every: Option<u32>,
    /// Test-only faults: the sender sends every Nth datagram after the next one.
    #[arg(long, hide = true, value_name = "N")]
    pub test_swap_every: Option<u32>,
}

/// A bit rate ("500k", "100M", "1G": 1000-based), as every part of fathom reads one.
fn parse_rate(s: &str) -> Result<f64, ValueError> {
    Ok(fathom_units::rate::parse(s)? as f64)
}

/// A number of datagrams, or of datagrams per second: "1000", "500k", "1M" (1000-based).
fn parse_count(s: &str) -> Result<u64, ValueError> {
    fathom_units::rate::parse_in(s, 0..=u64::MAX).map_err(|_| ValueError::NotDatagrams(s.into()))
}

/// Datagrams per second: see [`parse_count`].
fn parse_pps(s: &str) -> Result<f64, ValueError> {
    Ok(parse_count(s)? as f64)
}

/// Checks that this host's kernel takes UDP_SEGMENT and UDP_GRO before any test starts;
/// `pretend_missing` fails as a kernel without them would (for tests).
fn gso_available(pretend_missing: bool) -> Result<(), ArgsError> {
    match pretend_missing {
        true => Err(fathom_engine::udp_offload_refused(
            "UDP_SEGMENT",
            std::io::Error::from_raw_os_error(libc::ENOPROTOOPT),
        )),
        false => fathom_engine::udp_offload_available(),
    }
    .map_err(|e| ArgsError::Host(e.to_string()))
}

impl UdpArgs {
    /// Validates the options into a plan of kind `udp`; errors name the flag.
    pub fn plan(&self) -> Result<TestPlan, ArgsError> {
        let c = &self.common;
        c.validate()?;
        let limit = c.limit("-n/--count", self.count, Limit::Datagrams)?;
        let size = u32::try_from(self.size).unwrap_or(u32::MAX);
        let faults = UdpFaults {
            drop_every: self.test_drop_every,
            duplicate_every: self.test_duplicate_every,
            swap_every: self.test_swap_every,
        };
        if self.gso {
            gso_available(self.test_no_gso)?;
        }
        let (client, server) = c.sides();
        let udp = UdpOptions {
            size,
            batch: self.batch,
            rate_bps: self.rate,
            pps: self.pps,
            blast: self.blast,
            faults: (faults != UdpFaults::default()).then_some(faults),
            gso: self.gso,
        };
        super::common::checked(TestPlan {
            flows: flows(c.connections(), self.reverse, false),
            limit,
            omit_ns: c.omit,
            interval_ns: c.interval,
            socket: SocketOptions {
                rcvbuf: c.socket().rcvbuf.or(Some(DEFAULT_RCVBUF)),
                ..c.socket()
            },
            write_size: udp.write_bytes(),
            read_size: udp.read_bytes(),
            kind: KindPlan::Udp(udp),
            client,
            server,
            ..TestPlan::default()
        })
    }
}

/// The plan fields the UDP stream options set.
const SETS: &[Sets] = &[
    Sets::by(&["limit.datagrams"], &["count"]),
    Sets::by(&["udp", "udp.size"], &["size"]),
    Sets::by(&["udp.batch"], &["batch"]),
    Sets::by(&["udp.rate_bps"], &["rate"]),
    Sets::by(&["udp.pps"], &["pps"]),
    Sets::by(&["write_size", "read_size"], &["size", "batch"]),
];

impl KindArgs for UdpArgs {
    fn plan_for(&self, _: KindId) -> Result<TestPlan, ArgsError> {
        if self.iperf3.is_some() {
            return Err(ArgsError::iperf3_alone("udp"));
        }
        self.plan()
    }

    fn sets(&self) -> &'static [Sets] {
        SETS
    }
}
