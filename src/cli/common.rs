//! Options every test command shares: where, how long, how many, socket options, output.

use super::error::{ArgsError, Sets, ValueError};
use super::units::{parse_affinity, parse_count, parse_duration, parse_io_size, Affinity};
use fathom_proto::plan::{Limit, SideOptions, SocketOptions, TestPlan};
use fathom_proto::validate::{MIN_INTERVAL_NS, TEST_MEMORY_BUDGET};
use fathom_report::stats::Confidence;
use std::net::IpAddr;
use std::path::PathBuf;

/// Options shared by `stream`, `rr` and `crr`.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Agent to test against; without it, an agent runs in-process on loopback.
    #[arg(value_name = "HOST[:PORT]")]
    pub host: Option<String>,
    /// The server agent (same as HOST): a lab host name or HOST[:PORT].
    #[arg(long, value_name = "HOST", conflicts_with = "host")]
    pub server: Option<String>,
    /// Client agents that run the test against the server at one common instant, each with -P
    /// connections: lab host names or HOST[:PORT], comma-separated.
    #[arg(long, value_name = "HOST,HOST,...", value_delimiter = ',')]
    pub clients: Vec<String>,
    /// The lab whose host names --server/--clients/HOST use (default: the one running lab).
    #[arg(long, value_name = "NAME")]
    pub lab: Option<String>,
    /// Parallel connections (per direction).
    #[arg(
        short = 'P',
        long,
        default_value_t = 1,
        value_parser = parse_count,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub parallel: u32,
    /// Measured time, after the warm-up (default 10s; at least 10ms, the shortest interval).
    #[arg(short = 't', long, value_parser = parse_duration, value_name = "DUR", allow_hyphen_values = true)]
    pub time: Option<u64>,
    /// Warm-up excluded from the results.
    #[arg(long, value_parser = parse_duration, default_value = "0", value_name = "DUR", allow_hyphen_values = true)]
    pub omit: u64,
    /// Interval between samples.
    #[arg(short = 'i', long, value_parser = parse_duration, default_value = "1s", value_name = "DUR", allow_hyphen_values = true)]
    pub interval: u64,
    /// Socket buffer size, send and receive, on both ends.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", allow_hyphen_values = true)]
    pub buffer: Option<u32>,
    /// Send buffer size (SO_SNDBUF), both ends.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", conflicts_with = "buffer", allow_hyphen_values = true)]
    pub sndbuf: Option<u32>,
    /// Receive buffer size (SO_RCVBUF), both ends.
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE", conflicts_with = "buffer", allow_hyphen_values = true)]
    pub rcvbuf: Option<u32>,
    /// Disable Nagle's algorithm (TCP_NODELAY).
    #[arg(long)]
    pub nodelay: bool,
    /// Congestion control algorithm (e.g. cubic, bbr, reno).
    #[arg(long, value_name = "ALGO")]
    pub cc: Option<String>,
    /// TCP maximum segment size (TCP_MAXSEG).
    #[arg(long, value_name = "N")]
    pub mss: Option<u32>,
    /// Pin worker threads: LOCAL[/REMOTE] CPU lists, e.g. 0-1/2-3 or /1.
    #[arg(long, value_parser = parse_affinity, value_name = "CPUS[/CPUS]")]
    pub affinity: Option<Affinity>,
    /// Use only CPUs 0..N-1 on each end: both ends' workers stay within them (the scheduler
    /// places them), N threads by default; the cpu-scaling study varies it.
    #[arg(long, value_name = "N", conflicts_with = "affinity")]
    pub cpus: Option<u32>,
    /// Worker threads on each end (default: one per CPU, at most one per connection).
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Use IPv4 only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Use IPv6 only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Local address for the data connections.
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<IpAddr>,
    /// Pre-shared key file for the agent: the same file it serves with (make one with `fathom
    /// key new FILE`; `fathom key --help` says what it holds).
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Print one JSON document on stdout.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print interval rows as CSV on stdout.
    #[arg(long)]
    pub csv: bool,
    /// End with the advisor's findings: what limited this run and what to change, ranked
    /// (docs/advisor.md); with --json, the document's `advice` member.
    #[arg(long)]
    pub advise: bool,
    /// With --advise: re-run the test with the fathom option its top finding names and as
    /// typed, alternately, --iterations times each (default 3, 2 to 20), and print the ratio
    /// after / before with its confidence interval (`advice_check` in JSON).
    #[arg(long, requires = "advise")]
    pub verify_advice: bool,
    /// Print no interval lines while the test runs, only the table after it.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// With several client hosts, print each host's line under every interval line.
    #[arg(long)]
    pub per_host: bool,
    /// Repeat the test: at most MAX times (and at least MIN, default 3, when --confidence may
    /// stop early); reports mean, confidence interval, min, median and max.
    #[arg(long, value_parser = parse_iterations, value_name = "MAX[,MIN]")]
    pub iterations: Option<(u32, u32)>,
    /// Stop iterating once the LEVEL% Student-t interval of the main figure is narrower than
    /// WIDTH% of its mean (netperf's -I): 99,5% means within ±2.5% at 99% confidence.
    #[arg(long, value_parser = parse_confidence, value_name = "LEVEL[,WIDTH%]")]
    pub confidence: Option<Confidence>,
    #[command(flatten)]
    pub discovery: super::discover::DiscoveryArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The plan fields the shared options set.
pub const SETS: &[Sets] = &[
    Sets::by(&["flows", "flows.id"], &["parallel"]),
    Sets::by(&["limit.duration"], &["time"]),
    Sets::by(&["omit"], &["omit"]),
    Sets::by(&["interval"], &["interval"]),
    Sets::by(&["socket.sndbuf"], &["sndbuf", "buffer"]),
    Sets::by(&["socket.rcvbuf"], &["rcvbuf", "buffer"]),
    Sets::by(&["socket.mss"], &["mss"]),
    Sets::by(&["socket.cc"], &["cc"]),
    Sets {
        fields: &["client.affinity"],
        ids: &["affinity"],
        note: " (this side's CPUs)",
    },
    Sets {
        fields: &["server.affinity"],
        ids: &["affinity"],
        note: " (the agent's CPUs, after /)",
    },
    Sets::by(&["client.cpu_set", "server.cpu_set"], &["cpus"]),
    Sets::by(&["client.threads", "server.threads"], &["threads"]),
];

/// Where results are kept.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// The results database (default: $FATHOM_STORE, else ~/.local/share/fathom/fathom.db).
    #[arg(long = "store", value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// Do not keep this run in the results database.
    #[arg(long)]
    pub no_store: bool,
}

impl StoreArgs {
    /// The database path the options and environment name.
    pub fn resolved(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(fathom_store::default_path)
    }
}

/// Which results database the commands that read it (runs, show, compare, plot, report) read;
/// they never write one, so they take no --no-store.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReadStoreArgs {
    /// The results database to read (default: $FATHOM_STORE, else
    /// ~/.local/share/fathom/fathom.db).
    #[arg(long = "store", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

impl ReadStoreArgs {
    /// The database path the option and environment name.
    pub fn resolved(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(fathom_store::default_path)
    }
}

/// Validates a plan built from the command line (the same check the agent makes) and this
/// end's memory need; a refused field is named by its flag in `TestArgs::plan`.
pub fn checked(plan: TestPlan) -> Result<TestPlan, ArgsError> {
    plan.validate().map_err(ArgsError::Plan)?;
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get()) as u32;
    let need = plan.memory_estimate(&plan.client, plan.flows.len(), cpus);
    if need > TEST_MEMORY_BUDGET {
        return Err(ArgsError::Memory {
            need_mb: need >> 20,
            budget_mb: TEST_MEMORY_BUDGET >> 20,
        });
    }
    Ok(plan)
}

/// `--iterations MAX[,MIN]`.
pub fn parse_iterations(s: &str) -> Result<(u32, u32), ValueError> {
    let num = |x: &str| {
        x.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| ValueError::NotIterations(x.into()))
    };
    let (max, min) = match s.split_once(',') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let m = num(s)?;
            (m, m.min(3))
        }
    };
    if min > max {
        return Err(ValueError::MinAboveMax { min, max });
    }
    Ok((max, min))
}

/// `--confidence LEVEL[,WIDTH%]`: percent figures, e.g. 99,5% (width defaults to 5%).
pub fn parse_confidence(s: &str) -> Result<Confidence, ValueError> {
    let pct = |x: &str, what: &'static str, lo: f64, hi: f64| {
        x.trim()
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|v| *v > lo && *v < hi)
            .map(|v| v / 100.0)
            .ok_or_else(|| ValueError::NotPercent {
                what,
                value: x.into(),
                lo,
                hi,
            })
    };
    let (level, width) = match s.split_once(',') {
        Some((l, w)) => (pct(l, "level", 50.0, 100.0)?, pct(w, "width", 0.0, 100.0)?),
        None => (pct(s, "level", 50.0, 100.0)?, 0.05),
    };
    Ok(Confidence { level, width })
}

impl CommonArgs {
    /// The server as named by HOST or --server, or as found by --agents-from.
    pub fn server_name(&self) -> Option<&str> {
        let found = self
            .discovery
            .found
            .as_ref()
            .map(|f| f.server.name.as_str());
        self.host.as_deref().or(self.server.as_deref()).or(found)
    }

    /// Connections per direction in the whole test: -P for each client host.
    pub fn connections(&self) -> u32 {
        let clients = self.discovery.clients().unwrap_or(self.clients.len());
        self.parallel * (clients.max(1) as u32)
    }

    /// Checks the shared options; errors name the flag.
    pub fn validate(&self) -> Result<(), ArgsError> {
        if !self.clients.is_empty()
            && self.server_name().is_none()
            && self.discovery.agents_from.is_none()
        {
            return Err(ArgsError::flag(
                "--clients",
                "name the server too, with --server HOST",
            ));
        }
        if self.clients.iter().any(|c| c.trim().is_empty()) {
            return Err(ArgsError::flag(
                "--clients",
                "an empty host name in the list",
            ));
        }
        if self.parallel == 0 {
            return Err(ArgsError::flag("-P/--parallel", "must be at least 1"));
        }
        if self.parallel > 100_000 {
            return Err(ArgsError::flag("-P/--parallel", "at most 100000"));
        }
        if self.time == Some(0) {
            return Err(ArgsError::flag("-t/--time", "must be longer than 0"));
        }
        if let Some(t) = self.time.filter(|t| *t < MIN_INTERVAL_NS) {
            return Err(ArgsError::flag(
                "-t/--time",
                format!(
                    "{} is shorter than the shortest interval ({}), so nothing would be \
                 measured; try -t 1s",
                    fathom_units::duration::format(std::time::Duration::from_nanos(t)),
                    fathom_units::duration::format(std::time::Duration::from_nanos(
                        MIN_INTERVAL_NS
                    ))
                ),
            ));
        }
        if let Some(n) = self.cpus {
            let here = std::thread::available_parallelism().map_or(1, |c| c.get()) as u32;
            if n == 0 || n > here {
                return Err(ArgsError::flag(
                    "--cpus",
                    format!("{n} is not between 1 and this machine's {here} CPUs"),
                ));
            }
        }
        self.check_placement()?;
        if let Some(cc) = self
            .cc
            .as_deref()
            .filter(|_| self.runs_the_connecting_end())
        {
            fathom_engine::sockopt::check_cc(cc).map_err(|e| ArgsError::Host(e.to_string()))?;
        }
        if self.confidence.is_some() && self.iterations.is_none() {
            return Err(ArgsError::Needs {
                flag: "--confidence",
                needs: "--iterations MAX[,MIN] (how many runs at most)",
            });
        }
        Ok(())
    }

    /// True when this process opens the data connections (no client hosts named or found).
    fn runs_the_connecting_end(&self) -> bool {
        self.clients.is_empty() && self.discovery.clients().unwrap_or(0) == 0
    }

    /// Refuses an --affinity this machine cannot honour: this side's CPUs when this process runs
    /// the connecting end (no --clients), the agent's too when it runs in-process (no host).
    /// A remote agent checks its own.
    fn check_placement(&self) -> Result<(), ArgsError> {
        let (local, remote) = self.affinity.clone().unwrap_or((None, None));
        let here = [
            (
                local.filter(|_| self.runs_the_connecting_end()),
                "this side's",
            ),
            (
                remote.filter(|_| self.server_name().is_none()),
                "the agent's",
            ),
        ];
        for (cpus, whose) in here {
            if let Some((cpu, usable)) = cpus.and_then(|c| fathom_engine::clock::unusable_cpu(&c)) {
                return Err(ArgsError::flag(
                    "--affinity",
                    format!(
                        "CPU {cpu} ({whose}) is not one this machine lets fathom use ({usable})"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a plan whose spinning (`--busy-poll`) workers would share a CPU of this machine
    /// (`fathom_engine::spin`): this side's when this process runs the connecting end, the
    /// agent's too when it runs in-process. A remote agent checks its own end, and an end on
    /// loopback both.
    pub fn check_spinning(&self, plan: &TestPlan) -> Result<(), ArgsError> {
        use fathom_engine::kind::Side;
        use fathom_engine::spin::{clash, End};
        let here = [
            self.runs_the_connecting_end().then_some(End {
                label: "this side's",
                side: Side::Client,
            }),
            self.server_name().is_none().then_some(End {
                label: "the agent's",
                side: Side::Server,
            }),
        ];
        let ends: Vec<End> = here.into_iter().flatten().collect();
        clash(plan, &ends).map_or(Ok(()), |why| Err(ArgsError::Host(why)))
    }

    /// The limit: `count` (given with the flag `count_flag`, made a limit by `make`), else the
    /// time.
    pub fn limit(
        &self,
        count_flag: &'static str,
        count: Option<u64>,
        make: fn(u64) -> Limit,
    ) -> Result<Limit, ArgsError> {
        match count {
            Some(0) => Err(ArgsError::flag(count_flag, "must be at least 1")),
            Some(_) if self.time.is_some() => Err(ArgsError::Together {
                first: "-t/--time",
                second: count_flag,
            }),
            Some(_) if self.omit > 0 => Err(ArgsError::OmitCounted { count: count_flag }),
            Some(n) => Ok(make(n)),
            None => Ok(Limit::Time {
                duration_ns: self.time.unwrap_or(10_000_000_000),
            }),
        }
    }

    /// Socket options on every data socket.
    pub fn socket(&self) -> SocketOptions {
        SocketOptions {
            sndbuf: self.buffer.or(self.sndbuf),
            rcvbuf: self.buffer.or(self.rcvbuf),
            nodelay: self.nodelay,
            cc: self.cc.clone(),
            mss: self.mss,
            quickack: false,
            busy_poll: false,
            ipv6: if self.ipv6 {
                Some(true)
            } else if self.ipv4 {
                Some(false)
            } else {
                None
            },
            max_pacing_rate: None,
        }
    }

    /// (client end's, server end's) thread placement.
    pub fn sides(&self) -> (SideOptions, SideOptions) {
        let (local, remote) = self.affinity.clone().unwrap_or((None, None));
        let cpu_set = self.cpus.map(|n| (0..n).collect::<Vec<u32>>());
        let threads = self.threads.or(self.cpus);
        (
            SideOptions {
                affinity: local,
                cpu_set: cpu_set.clone(),
                threads,
            },
            SideOptions {
                affinity: remote,
                cpu_set,
                threads,
            },
        )
    }
}
