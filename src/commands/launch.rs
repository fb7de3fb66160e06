//! `fathom launch`: one process of a launch. Rank 0 gathers the other ranks' agents and runs
//! the test on them as a multi-host test; the others start an agent, register it, and wait
//! for the test's exit code, which every rank exits with.

use crate::agent::{Agent, AgentConfig};
use crate::cli::launch::LaunchArgs;
use crate::cli::read_key;
use crate::cli::test_args::TestArgs;
use crate::controller::{Target, Topology};
use crate::testbed::Testbed;
use crate::Failure;
use fathom_cluster::rank::{self, Launcher, Rank, Rank0};
use fathom_cluster::rendezvous::{self, Joining, Registered, Root};
use fathom_proto::auth;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Runs this process's part of the launch; the exit code every rank exits with.
pub fn run(a: &LaunchArgs, argv: &[String]) -> Result<u8, Failure> {
    a.check()?;
    if a.test.test.common().verify_advice {
        return Err(Failure::Usage(
            "--verify-advice re-runs the test from one controller, not under a launcher; run fathom doctor --run N --verify on the stored run".into(),
        ));
    }
    let env = |k: &str| std::env::var(k).ok();
    let me = rank::detect(env).map_err(|e| Failure::Usage(e.to_string()))?;
    if me.size < 2 {
        return Err(Failure::Usage(format!(
            "launch needs at least 2 processes (a server and a client); the launcher started {}",
            me.size
        )));
    }
    if a.server_rank >= me.size {
        return Err(Failure::Usage(format!(
            "--server-rank: {} is not a rank of this launch (0 to {})",
            a.server_rank,
            me.size - 1
        )));
    }
    let key = a.test.test.common().key_file.as_deref().map(read_key);
    let key = key.transpose()?;
    let launch = rank::launch_id(env);
    let (given, port) = rank0_address(a).map_err(usage)?;
    if me.rank == 0 {
        let v6 = a.test.test.common().ipv6 || given.is_some_and(|h| h.contains(':'));
        lead(a, &me, (v6, port), key, &launch, argv).map(|()| 0)
    } else {
        let host = match given {
            Some(h) => h,
            None => rank0_host(a, &me).map_err(usage)?,
        };
        Ok(follow(a, &me, (&host, port), key.as_deref(), &launch))
    }
}

/// Rank 0: listen on `port` (IPv6 if `v6`), gather, run the test, tell every rank its exit
/// code.
fn lead(
    a: &LaunchArgs,
    me: &Rank,
    (v6, port): (bool, u16),
    key: Option<Vec<u8>>,
    launch: &str,
    argv: &[String],
) -> Result<(), Failure> {
    let any = if v6 {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    };
    let root =
        Root::listen(SocketAddr::new(any, port), me.size, launch, key.clone()).map_err(|e| {
            Failure::Runtime(format!(
                "cannot listen for the other ranks on port {port}: {e}; pick another with \
             --rendezvous-port or --controller HOST:PORT"
            ))
        })?;
    let own_key = key.clone().unwrap_or_else(|| auth::random::<32>().to_vec());
    let own_port = start_agent(any, &own_key).map_err(|e| Failure::Runtime(e.to_string()))?;
    let t = Instant::now();
    let ranks = root
        .gather(Duration::from_nanos(a.rendezvous_timeout))
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let topo = topology(
        a.server_rank,
        ranks,
        own_port,
        key.is_none().then_some(own_key),
    );
    let mut test = a.test.test.clone();
    let c = test.common_mut();
    if !c.quiet && !c.json && !c.csv {
        eprintln!(
            "fathom: launch: {} ranks ({}) in {:.1} s; the server is {}",
            me.size,
            me.launcher,
            t.elapsed().as_secs_f64(),
            topo.server.name
        );
    }
    c.server = Some(topo.server.name.clone());
    c.clients = topo.clients.iter().map(|t| t.name.clone()).collect();
    let r = run_test(&test, topo, key, argv);
    root.finish(match &r {
        Ok(()) => 0,
        Err(Failure::Usage(_)) => 2,
        Err(_) => 1,
    });
    r
}

/// Runs the test on the gathered agents, as `fathom TEST --server --clients` would.
fn run_test(
    test: &TestArgs,
    topo: Topology,
    key: Option<Vec<u8>>,
    argv: &[String],
) -> Result<(), Failure> {
    let plan = test.plan()?;
    if plan.socket.max_pacing_rate.is_some() {
        return Err(Failure::Usage(
            "--rate: paces the streams this end sends; under launch the ranks send".into(),
        ));
    }
    super::test::check_ktls(test)?;
    let bed = Testbed::on(test.common(), topo, key);
    super::test::run_on(bed, test.common(), plan, argv)
}

/// The server (rank `server`'s agent) and the clients (every other rank's, rank 0's at
/// `own_port` with `own_key` if it has its own).
fn topology(
    server: u32,
    ranks: Vec<Registered>,
    own_port: u16,
    own_key: Option<Vec<u8>>,
) -> Topology {
    let root_ip = ranks
        .first()
        .map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |r| r.root_ip);
    let own = Target {
        addr: SocketAddr::new(root_ip, own_port),
        name: format!("rank0@{}", host_name()),
        embedded: false,
        netns: None,
        key: own_key,
        group: None,
    };
    let mut targets: Vec<(u32, Target)> = std::iter::once((0, own))
        .chain(ranks.into_iter().map(|r| {
            let t = Target {
                addr: r.agent,
                name: format!("rank{}@{}", r.rank, r.host),
                embedded: false,
                netns: None,
                key: r.key,
                group: None,
            };
            (r.rank, t)
        }))
        .collect();
    targets.sort_by_key(|(rank, _)| *rank);
    let at = targets.iter().position(|(r, _)| *r == server).unwrap_or(0);
    let (_, server) = targets.remove(at);
    Topology {
        server,
        clients: targets.into_iter().map(|(_, t)| t).collect(),
    }
}

/// A non-zero rank: start an agent, register it with rank 0 at `host`:`port`, wait for the
/// exit code. Errors are this rank's own: printed on stderr (stdout is rank 0's results), exit 1.
fn follow(
    a: &LaunchArgs,
    me: &Rank,
    (host, port): (&str, u16),
    key: Option<&[u8]>,
    launch: &str,
) -> u8 {
    let outcome = {
        let root = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let name = host_name();
        let joining = Joining {
            root: &root,
            rank: me.rank,
            size: me.size,
            launch,
            host: &name,
            key,
            timeout: Duration::from_nanos(a.rendezvous_timeout),
        };
        let resolve = || (host, port).to_socket_addrs().map(Iterator::collect);
        rendezvous::join(&joining, resolve, start_agent).and_then(|j| j.wait())
    };
    match outcome {
        Ok(0) => 0,
        Ok(code) => {
            eprintln!(
                "fathom: rank {}: the test failed (exit {code}); rank 0's output says why",
                me.rank
            );
            code
        }
        Err(e) => {
            eprintln!("fathom: rank {}: {e}", me.rank);
            1
        }
    }
}

/// Where a non-zero rank finds rank 0 without --controller: what the launcher's environment says.
fn rank0_host(a: &LaunchArgs, me: &Rank) -> Result<String, LaunchError> {
    match rank::rank0(me, |k| std::env::var(k).ok())? {
        Some(Rank0::Host(h)) => Ok(h),
        Some(Rank0::Loopback) if a.test.test.common().ipv6 => Ok("::1".into()),
        Some(Rank0::Loopback) => Ok("127.0.0.1".into()),
        None => Err(LaunchError::NoRank0(me.launcher)),
    }
}

/// --controller's host (if given) and the rendezvous port: --controller's, else
/// --rendezvous-port.
fn rank0_address(a: &LaunchArgs) -> Result<(Option<String>, u16), LaunchError> {
    let Some(spec) = a.controller.as_deref() else {
        return Ok((None, a.rendezvous_port));
    };
    let bad = || LaunchError::Controller(spec.into());
    if let Ok(sa) = spec.parse::<SocketAddr>() {
        return Ok((Some(sa.ip().to_string()), sa.port()));
    }
    let bare = spec.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
    if let Ok(ip) = bare.unwrap_or(spec).parse::<IpAddr>() {
        return Ok((Some(ip.to_string()), a.rendezvous_port));
    }
    match spec.rsplit_once(':') {
        _ if spec.is_empty() || spec.starts_with('[') => Err(bad()),
        Some((h, p)) if !h.is_empty() => Ok((Some(h.into()), p.parse().map_err(|_| bad())?)),
        Some(_) => Err(bad()),
        None => Ok((Some(spec.into()), a.rendezvous_port)),
    }
}

/// Starts this rank's agent on `ip` (any port), requiring `key`; its port.
fn start_agent(ip: IpAddr, key: &[u8]) -> Result<u16, LaunchError> {
    let cfg = AgentConfig {
        key: Some(key.to_vec()),
        ..AgentConfig::default()
    };
    let agent = Agent::bind(SocketAddr::new(ip, 0), cfg)
        .map_err(|source| LaunchError::Bind { ip, source })?;
    let port = agent.local_addr()?.port();
    agent.spawn()?;
    Ok(port)
}

/// Why this rank cannot find rank 0 or start its agent; each names the flag or what is missing.
#[derive(Debug, thiserror::Error)]
enum LaunchError {
    /// The launcher's variables do not make a rank.
    #[error(transparent)]
    Rank(#[from] rank::RankError),
    /// Nothing says where rank 0 runs, and --controller is not given.
    #[error(
        "the launcher's environment ({0}) does not say where rank 0 runs (no Slurm node \
         list, not every rank on this node): name it with --controller HOST[:PORT]"
    )]
    NoRank0(Launcher),
    /// --controller's value is not a host and an optional port.
    #[error("--controller: '{0}' is not HOST[:PORT]")]
    Controller(String),
    /// The agent's listening socket.
    #[error("cannot start this rank's agent on {ip}: {source}")]
    Bind {
        /// The address it was to listen on.
        ip: IpAddr,
        /// Why it could not.
        source: std::io::Error,
    },
    /// The agent's address or its thread.
    #[error(transparent)]
    Agent(#[from] std::io::Error),
}

/// This host's name: Slurm's node name, else the kernel's host name.
fn host_name() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A usage error's exit (2) with its message.
fn usage(e: LaunchError) -> Failure {
    Failure::Usage(e.to_string())
}
