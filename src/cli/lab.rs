//! The `fathom lab` command line (clap types); `commands::lab` turns them into lab calls.

use clap::{Args, Subcommand, ValueEnum};
use fathom_lab::{DEFAULT_AGENT_PORT, DEFAULT_LAB};
use std::path::PathBuf;

const LAB_EXAMPLES: &str = "\
Examples:
  fathom lab up --hosts 6                 six hosts h1..h6 (10.77.0.1..6) on one switch
  fathom lab up topology.toml             hosts, switches and links from a file
  fathom lab status                       hosts, addresses, agents, links
  fathom lab exec h3 -- ip addr           run a command inside host h3
  fathom lab up --hosts 2 --wan delay=25ms   h1 and h2 joined by the WAN emulator (50 ms RTT)
  fathom lab wan set h1-h2 delay=50ms     change a running WAN link
  fathom lab down                         remove everything the lab made

Every command takes --name NAME (default: the only lab there is, else 'lab'), so labs coexist.
Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN). State lives in /run/fathom/lab/NAME/.";

/// `fathom lab`: a multi-host network on this machine, built from network namespaces.
#[derive(Debug, Args)]
#[command(after_help = LAB_EXAMPLES)]
pub struct LabArgs {
    /// What to do.
    #[command(subcommand)]
    pub cmd: LabCommand,
}

/// The `fathom lab` subcommands.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Create a lab: hosts in network namespaces joined through switches, an agent in each.
    #[command(
        after_help = super::topology_help::SHORT,
        after_long_help = super::topology_help::LONG
    )]
    Up(UpArgs),
    /// Change a running WAN link.
    #[command(after_help = "\
Examples:
  fathom lab wan set h1-h2 delay=100ms jitter=2ms loss=0.1%   both directions
  fathom lab wan set h1-h2 rate=10M --direction b-to-a        one direction only
  fathom lab wan set wan1 loss=ge:1%:10%                      bursty (Gilbert-Elliott) loss
  fathom lab wan set sw1-sw2 --reset delay=5ms                the rest back to a plain wire

`fathom lab status` names each WAN link and shows its parameters and counters;
`fathom lab wan set --help` lists the keys.")]
    Wan {
        /// What to do.
        #[command(subcommand)]
        cmd: WanCommand,
    },
    /// The forwarder of one WAN link; `lab up` starts it inside the link's router namespace.
    #[command(hide = true)]
    WanRouter {
        /// The lab's name.
        #[arg(long)]
        name: String,
        /// The WAN link's name.
        #[arg(long)]
        link: String,
    },
    /// Remove everything a lab made: agents, forwarders, namespaces, veths, bridges, state.
    #[command(after_help = "Examples:\n  fathom lab down\n  fathom lab down --name campus")]
    Down {
        /// The lab's name.
        #[arg(long)]
        name: Option<String>,
    },
    /// Show a lab's hosts, addresses, agents, switches and links; exit 1 if it is stale.
    #[command(
        after_help = "Examples:\n  fathom lab status\n  fathom lab status --name campus --json"
    )]
    Status {
        /// The lab's name.
        #[arg(long)]
        name: Option<String>,
        /// Print one JSON document (schema_version 2), errors included.
        #[arg(long)]
        json: bool,
    },
    /// Run a command inside a host (or switch) of a lab; exits with the command's code.
    #[command(
        after_help = "Examples:\n  fathom lab exec h3 -- ip addr\n  fathom lab exec --name campus h1 -- ping -c 3 10.77.0.2"
    )]
    Exec {
        /// The lab's name.
        #[arg(long)]
        name: Option<String>,
        /// The host or switch to run in.
        host: String,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        cmd: Vec<String>,
    },
}

/// `fathom lab up`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("layout").required(true).args(["hosts", "topology"]))]
pub struct UpArgs {
    /// Make N hosts h1..hN on one switch sw1 (with --wan: in two halves, see there).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000),
          conflicts_with = "topology")]
    pub hosts: Option<u32>,
    /// A topology file (TOML) of hosts, switches and links.
    pub topology: Option<PathBuf>,
    /// The lab's name.
    #[arg(long, default_value = DEFAULT_LAB)]
    pub name: String,
    /// With --hosts: the hosts' subnet [default: 10.77.0.0/16].
    #[arg(long, conflicts_with = "topology")]
    pub subnet: Option<String>,
    /// With --hosts: the MTU of every link [default: 1500].
    #[arg(long, conflicts_with = "topology")]
    pub mtu: Option<u32>,
    /// With --hosts: limit every link to this rate in bits/s, both ways (e.g. 100M, 1G).
    #[arg(long, conflicts_with = "topology", allow_hyphen_values = true)]
    pub rate: Option<String>,
    /// With --hosts: split the hosts in two joined by the WAN emulator with these parameters
    /// in each direction (delay is one way): delay, jitter, loss, rate, burst, queue,
    /// reorder, seed; e.g. "delay=50ms,rate=1G". Two hosts: h1 - wan - h2; more: the first
    /// half on switch sw1, the rest on sw2, the emulator between the switches.
    #[arg(long, value_name = "PARAMS", conflicts_with = "topology")]
    pub wan: Option<String>,
    /// IPsec (strongSwan's charon, IKEv2 with a lab-made pre-shared key, ESP in tunnel mode)
    /// between every pair of hosts, with this suite: aes-128-gcm, aes-256-gcm,
    /// chacha20-poly1305 or aes-cbc+sha256. ESP runs in the kernel where it can, else in
    /// charon's user space (kernel-libipsec, a TUN device); `lab up` says which.
    #[arg(long, value_name = "SUITE", value_parser = fathom_lab::ipsec::Suite::parse)]
    pub ipsec: Option<fathom_lab::ipsec::Suite>,
    /// With --ipsec or a topology's `ipsec` keys: where ESP runs, kernel or userspace,
    /// instead of the kernel where it can.
    #[arg(long, value_name = "PATH",
          value_parser = fathom_lab::ipsec::Datapath::parse)]
    pub ipsec_datapath: Option<fathom_lab::ipsec::Datapath>,
    /// For tests: give this host a pre-shared key of its own, so that its links fail.
    #[arg(long, value_name = "HOST", hide = true)]
    pub ipsec_wrong_psk: Option<String>,
    /// The port agents listen on.
    #[arg(long, default_value_t = DEFAULT_AGENT_PORT,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub agent_port: u16,
    /// Seconds to wait for the links to come up and every agent to accept connections.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub ready_timeout: u64,
    /// Run an sshd in every host (port 22, its addresses only) with lab-only keys, so that
    /// `fathom lab exec h1 -- scp FILE h2:/tmp/` works as root; all removed at `lab down`.
    #[arg(long)]
    pub sshd: bool,
    /// Give every host's agent a scratch directory for `fathom file` copies
    /// (/var/tmp/fathom-lab/NAME/HOST, paths relative to it), removed by `lab down`.
    #[arg(long)]
    pub files_root: bool,
}

/// The `fathom lab wan` subcommands.
#[derive(Debug, Subcommand)]
pub enum WanCommand {
    /// Change the emulator's parameters of a running WAN link: the keys given change, the
    /// others keep their values (with --reset, their defaults).
    #[command(after_help = "\
Examples:
  fathom lab wan set h1-h2 delay=100ms jitter=2ms loss=0.1%
  fathom lab wan set h1-h2 rate=10M --direction b-to-a
  fathom lab wan set sw1-sw2 --reset delay=5ms

Keys: delay (one way), jitter, loss (0.1% or ge:P:R[:1-H[:1-K]]), rate (bits/s), burst, queue
(1000p or 256KB), reorder, seed. `fathom lab status` shows each link's name, ends and parameters.")]
    Set {
        /// The lab's name.
        #[arg(long)]
        name: Option<String>,
        /// The WAN link (as `lab status` names it, e.g. h1-h2) or its router (wan1).
        link: String,
        /// Parameters as key=value, separated by spaces or commas.
        #[arg(required = true, value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Which direction to change: a-to-b is from the link's first end to its second.
        #[arg(long, value_enum, default_value_t = DirectionArg::Both)]
        direction: DirectionArg,
        /// Start from the defaults (a plain wire) instead of the current parameters.
        #[arg(long)]
        reset: bool,
    },
}

/// `--direction` of `lab wan set`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DirectionArg {
    /// Both directions.
    Both,
    /// From the link's first end to its second.
    AToB,
    /// From the link's second end to its first.
    BToA,
}

impl From<DirectionArg> for fathom_lab::Directions {
    fn from(d: DirectionArg) -> fathom_lab::Directions {
        match d {
            DirectionArg::Both => fathom_lab::Directions::Both,
            DirectionArg::AToB => fathom_lab::Directions::AToB,
            DirectionArg::BToA => fathom_lab::Directions::BToA,
        }
    }
}
