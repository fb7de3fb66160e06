//! `fathom stream`: options, and their validation into a [`TestPlan`].

use super::common::CommonArgs;
use super::error::{ArgsError, Sets};
use super::kind::KindArgs;
use super::tls::TlsArgs;
use super::units::{parse_io_size, parse_size};
use fathom_proto::plan::*;

/// Bytes per write by default, iperf2's and iperf3's. On a veth pair between two namespaces one
/// stream's 1 MB writes made the sender hold its socket through 16 segments at a time while the
/// receiver's ACKs queued behind it: with 128 KB writes (and 128 KB reads) the sender's CPU per
/// GB fell by a quarter and the rate rose by a fifth; over loopback, where a stream's 64K send
/// buffers cap every write anyway, the two sizes moved the same (bench/RESULTS.md, "Stream
/// against the peers, session 29").
pub const DEFAULT_WRITE: u32 = 128 << 10;

/// `fathom stream [HOST[:PORT]]`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Sizes take K/M/G, 1024-based (-n 100M = 104,857,600 bytes); durations take ms/s/m.

Examples:
  fathom stream                                 loopback, in-process agent, 10 s
  fathom stream HOST -P 4 -t 30s --omit 3s --buffer 64K --write 1M
  fathom stream HOST -R                         reverse: the agent sends
  fathom stream HOST --bidir                    both directions at once
  fathom stream HOST -n 1G --json               move exactly 1 GB, JSON result
  fathom stream HOST --rate 100M -P 2          paced to 100 Mbit/s in all (SO_MAX_PACING_RATE)
  fathom stream --affinity 0/1                  pin local workers to CPU 0, the agent's to CPU 1
  fathom stream --tls --cipher aes-128-gcm      TLS 1.3, the agent's certificate pinned")]
pub struct StreamArgs {
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Move exactly this many bytes (per direction) instead of running for a time.
    #[arg(short = 'n', long, value_parser = parse_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub bytes: Option<u64>,
    /// Bytes per write call (default 128K).
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub write: Option<u32>,
    /// Bytes per read call (default: each end's L1 data cache size, 16K-128K; at least 128K
    /// off loopback).
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub read: Option<u32>,
    /// Reverse: the agent sends.
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once (-P connections each way).
    #[arg(long)]
    pub bidir: bool,
    /// Send with sendfile from memory instead of copying each write.
    #[arg(long)]
    pub zerocopy: bool,
    /// TLS options.
    #[command(flatten)]
    pub tls: super::tls::TlsArgs,
    /// Pace the sending at this many bits per second in all, split over the connections, by
    /// SO_MAX_PACING_RATE (the fq qdisc, or TCP's internal pacing): forward streams only, this
    /// end sending. With --iperf3, iperf3's -b (per stream) for TCP.
    #[arg(long, value_parser = parse_rate, value_name = "BITS", allow_hyphen_values = true)]
    pub rate: Option<u64>,
    /// Drive a stock iperf3 server (`iperf3 -s`) at HOST[:PORT] (port 5201 by default) instead
    /// of a fathom agent: -P, -t, -n, -R, --bidir, --omit, --write and --rate apply; both ends
    /// reported.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub iperf3: Option<String>,
}

/// The flows of a test with `parallel` connections going `reverse`/`bidir`.
pub fn flows(parallel: u32, reverse: bool, bidir: bool) -> Vec<FlowPlan> {
    let dirs: &[Direction] = match (reverse, bidir) {
        (_, true) => &[Direction::Forward, Direction::Reverse],
        (true, false) => &[Direction::Reverse],
        _ => &[Direction::Forward],
    };
    dirs.iter()
        .flat_map(|&dir| (0..parallel).map(move |_| dir))
        .enumerate()
        .map(|(i, dir)| FlowPlan { id: i as u32, dir })
        .collect()
}

impl StreamArgs {
    /// Validates the options into a plan; errors name the flag.
    pub fn plan(&self) -> Result<TestPlan, ArgsError> {
        let c = &self.common;
        c.validate()?;
        let limit = c.limit("-n/--bytes", self.bytes, Limit::Bytes)?;
        let (client, server) = c.sides();
        let socket = SocketOptions {
            max_pacing_rate: self.pacing_rate()?,
            ..c.socket()
        };
        super::common::checked(TestPlan {
            kind: KindPlan::Stream,
            flows: flows(c.connections(), self.reverse, self.bidir),
            limit,
            omit_ns: c.omit,
            interval_ns: c.interval,
            socket,
            write_size: self.write.unwrap_or(DEFAULT_WRITE),
            read_size: self.read.unwrap_or(0),
            zerocopy: self.zerocopy,
            tls: self.tls.options()?,
            client,
            server,
        })
    }
}

/// A bit rate ("500k", "100M", "1G": 1000-based), at least 8 bits per second.
fn parse_rate(s: &str) -> Result<u64, super::error::ValueError> {
    Ok(fathom_units::rate::parse(s)?)
}

impl StreamArgs {
    /// `--rate` as SO_MAX_PACING_RATE per connection, bytes/s. Only this end's sockets carry
    /// it, so the streams must be this end's to send.
    fn pacing_rate(&self) -> Result<Option<u64>, ArgsError> {
        let Some(bits) = self.rate else {
            return Ok(None);
        };
        let c = &self.common;
        let others = !c.clients.is_empty() || c.discovery.agents_from.is_some();
        if self.reverse || self.bidir || others {
            return Err(ArgsError::flag(
                "--rate",
                "paces the streams this end sends; with -R, --bidir or --clients other hosts send",
            ));
        }
        let per_conn = bits / 8 / u64::from(c.connections().max(1));
        if per_conn == 0 {
            return Err(ArgsError::flag(
                "--rate",
                format!(
                    "{bits} bits/s over {} connections is under a byte per second each",
                    c.connections()
                ),
            ));
        }
        Ok(Some(per_conn))
    }
}

/// The plan fields the stream options set.
const SETS: &[Sets] = &[
    Sets::by(&["limit.bytes"], &["bytes"]),
    Sets::by(&["write_size"], &["write"]),
    Sets::by(&["read_size"], &["read"]),
    Sets::by(&["zerocopy"], &["zerocopy"]),
];

impl KindArgs for StreamArgs {
    fn plan_for(&self, _: KindId) -> Result<TestPlan, ArgsError> {
        if self.iperf3.is_some() {
            return Err(ArgsError::iperf3_alone("stream"));
        }
        self.plan()
    }

    fn sets(&self) -> &'static [Sets] {
        SETS
    }

    fn tls(&self) -> Option<&TlsArgs> {
        Some(&self.tls)
    }
}
