//! `fathom stream`: options, and their validation into a [`TestPlan`].

use super::units::{parse_affinity, parse_duration, parse_io_size, parse_size};
use fathom_proto::plan::*;
use std::net::IpAddr;
use std::path::PathBuf;

/// Bytes per write by default: measured on loopback (see bench/RESULTS.md).
pub const DEFAULT_WRITE: u32 = 128 << 10;
/// Bytes per read by default.
pub const DEFAULT_READ: u32 = 128 << 10;

/// `fathom stream [HOST[:PORT]]`.
#[derive(clap::Args, Debug, Clone)]
#[command(allow_negative_numbers = true, after_help = "\
Sizes take K/M/G, 1024-based (-n 100M = 104,857,600 bytes); durations take ms/s/m.

Examples:
  fathom stream                                 loopback, in-process agent, 10 s
  fathom stream HOST -P 4 -t 30s --omit 3s --buffer 64K --write 128K
  fathom stream HOST -R                         reverse: the agent sends
  fathom stream HOST --bidir                    both directions at once
  fathom stream HOST -n 1G --json               move exactly 1 GB, JSON result
  fathom stream --affinity 0/1                  pin local workers to CPU 0, the agent's to CPU 1")]
pub struct StreamArgs {
    /// Agent to test against; without it, an agent runs in-process on loopback.
    #[arg(value_name = "HOST[:PORT]")]
    pub host: Option<String>,
    /// Parallel connections (per direction).
    #[arg(short = 'P', long, default_value_t = 1, value_name = "N")]
    pub parallel: u32,
    /// Measured time, after the warm-up.
    #[arg(short = 't', long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "bytes")]
    pub time: Option<u64>,
    /// Move exactly this many bytes (per direction) instead of running for a time.
    #[arg(short = 'n', long, value_parser = parse_size, value_name = "SIZE")]
    pub bytes: Option<u64>,
    /// Warm-up excluded from the results (slow start).
    #[arg(long, value_parser = parse_duration, default_value = "0", value_name = "DUR")]
    pub omit: u64,
    /// Interval between samples.
    #[arg(short = 'i', long, value_parser = parse_duration, default_value = "1s", value_name = "DUR")]
    pub interval: u64,
    /// Socket buffer size, send and receive, on both ends.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE")]
    pub buffer: Option<u32>,
    /// Send buffer size (SO_SNDBUF), both ends.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", conflicts_with = "buffer")]
    pub sndbuf: Option<u32>,
    /// Receive buffer size (SO_RCVBUF), both ends.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", conflicts_with = "buffer")]
    pub rcvbuf: Option<u32>,
    /// Bytes per write call.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE")]
    pub write: Option<u32>,
    /// Bytes per read call.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE")]
    pub read: Option<u32>,
    /// Disable Nagle's algorithm (TCP_NODELAY).
    #[arg(long)]
    pub nodelay: bool,
    /// Congestion control algorithm (e.g. cubic, bbr, reno).
    #[arg(long, value_name = "ALGO")]
    pub cc: Option<String>,
    /// TCP maximum segment size (TCP_MAXSEG).
    #[arg(long, value_name = "N")]
    pub mss: Option<u32>,
    /// Reverse: the agent sends.
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once (-P connections each way).
    #[arg(long)]
    pub bidir: bool,
    /// Pin worker threads: LOCAL[/REMOTE] CPU lists, e.g. 0-1/2-3 or /1.
    #[arg(long, value_parser = parse_affinity, value_name = "CPUS[/CPUS]")]
    pub affinity: Option<(Option<Vec<u32>>, Option<Vec<u32>>)>,
    /// Worker threads on each end (default: one per CPU, at most one per connection).
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Send with sendfile from memory instead of copying each write.
    #[arg(long)]
    pub zerocopy: bool,
    /// Use IPv4 only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Use IPv6 only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Local address for the data connections.
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<IpAddr>,
    /// Pre-shared key file for the agent.
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Print one JSON document on stdout.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print interval rows as CSV on stdout.
    #[arg(long)]
    pub csv: bool,
}

impl StreamArgs {
    /// Validates the options into a plan; errors name the flag.
    pub fn plan(&self) -> Result<TestPlan, String> {
        if self.parallel == 0 {
            return Err("-P/--parallel: must be at least 1".into());
        }
        if self.parallel > 100_000 {
            return Err("-P/--parallel: at most 100000".into());
        }
        if self.interval < 10_000_000 {
            return Err("-i/--interval: must be at least 10ms".into());
        }
        let limit = match (self.time, self.bytes) {
            (_, Some(0)) => return Err("-n/--bytes: must be at least 1 byte".into()),
            (_, Some(b)) => {
                if self.omit > 0 {
                    return Err("--omit applies to timed tests (-t); with -n the whole transfer is measured".into());
                }
                Limit::Bytes(b)
            }
            (Some(0), None) => return Err("-t/--time: must be longer than 0".into()),
            (Some(t), None) => Limit::Time { duration_ns: t },
            (None, None) => Limit::Time { duration_ns: 10_000_000_000 },
        };
        if let Some(m) = self.mss {
            if !(88..=65_535).contains(&m) {
                return Err(format!("--mss: {m} is outside 88..65535"));
            }
        }
        let dirs: &[Direction] = match (self.reverse, self.bidir) {
            (_, true) => &[Direction::Forward, Direction::Reverse],
            (true, false) => &[Direction::Reverse],
            _ => &[Direction::Forward],
        };
        let flows = dirs
            .iter()
            .flat_map(|&dir| (0..self.parallel).map(move |_| dir))
            .enumerate()
            .map(|(i, dir)| FlowPlan { id: i as u32, dir })
            .collect();
        let (local_cpus, remote_cpus) = self.affinity.clone().unwrap_or((None, None));
        Ok(TestPlan {
            kind: KindId::Stream,
            flows,
            limit,
            omit_ns: self.omit,
            interval_ns: self.interval,
            socket: SocketOptions {
                sndbuf: self.buffer.or(self.sndbuf),
                rcvbuf: self.buffer.or(self.rcvbuf),
                nodelay: self.nodelay,
                cc: self.cc.clone(),
                mss: self.mss,
                quickack: false,
                busy_poll: false,
                ipv6: if self.ipv6 { Some(true) } else if self.ipv4 { Some(false) } else { None },
            },
            write_size: self.write.unwrap_or(DEFAULT_WRITE),
            read_size: self.read.unwrap_or(DEFAULT_READ),
            zerocopy: self.zerocopy,
            rr: None,
            controller: SideOptions { affinity: local_cpus, threads: self.threads },
            agent: SideOptions { affinity: remote_cpus, threads: self.threads },
        })
    }
}
