//! The command line: raw arguments (clap) in, validated plans out. Nothing here opens a socket.

pub mod common;
pub mod discover;
pub mod doctor;
pub mod error;
pub mod file;
pub mod iperf3;
pub mod kind;
pub mod lab;
pub mod launch;
pub mod mesh;
pub mod method;
pub mod profile;
pub mod profile_run;
pub mod rr;
pub mod stream;
pub mod test_args;
pub mod tls;
pub mod topology_help;
pub mod udp;
pub mod units;

use clap::{Parser, Subcommand};
use fathom_engine::small_file::{read_small, MAX_SMALL_FILE};
use std::net::SocketAddr;
use std::path::PathBuf;

/// fathom: how fast a network path really is, why, and what to tune.
#[derive(Parser, Debug)]
#[command(name = "fathom", version, about, long_about = None, after_help = EXAMPLES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "\
Examples:
  fathom stream                          10 s TCP stream over loopback to an in-process agent
  fathom serve --key-file k              run an agent on a test host (port 5301)
  fathom stream HOST -P 4 -t 30s --omit 3s --key-file k
  fathom stream HOST -R --json           the agent sends; one JSON document on stdout
  fathom rr HOST --size 1460             request/response latency and transactions/s
  fathom crr HOST                        a connection per transaction
  fathom udp HOST --size 1472 --rate 1G  UDP stream: datagrams/s, loss, reordering, jitter
  fathom file put ./big.img HOST:/srv/big.img   a disk-to-disk copy, and where the time went
  srun -N 33 fathom launch stream -P 2   under Slurm (or mpirun): rank 0 controls, 32 clients
  fathom lab up --hosts 6                six namespace hosts on one switch, an agent in each
  fathom sweep stream --vary buffer=16K,64K,1M --vary parallel=1,10
  fathom stream --iterations 10 --confidence 99,5%   repeat until the 99% interval is ±2.5%
  fathom runs                            stored runs, newest first; then show, compare, plot, report
  fathom study socket-buffers --quick    a classic study: table, plots and an HTML page
  fathom mesh run mesh.toml              test every member's paths on a schedule (docs/mesh.md)";

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// The tests: stream, rr, crr, udp and file.
    #[command(flatten)]
    Test(test_args::TestArgs),
    /// Run a test at every combination of option values (a sweep), stored as a series.
    Sweep(method::SweepArgs),
    /// List stored runs (or series), newest first.
    Runs(method::RunsArgs),
    /// Show a stored run or series again.
    Show(method::ShowArgs),
    /// Compare two runs or series, and say whether the differences are significant.
    Compare(method::CompareArgs),
    /// Write a self-contained HTML report of stored runs and series.
    Report(method::ReportArgs),
    /// Plot a stored run's intervals or a series against a swept option (SVG or PNG).
    Plot(method::PlotArgs),
    /// Run one of the classic studies: sweeps, table, plots, HTML page and findings.
    Study(method::StudyArgs),
    /// Run an agent that executes tests for controllers.
    Serve(ServeArgs),
    /// iperf3's command line (-c HOST or -s, and its common flags) with iperf3's -J output.
    Iperf3(iperf3::Iperf3Args),
    /// Run a test across the processes of srun or mpirun: rank 0 controls, every rank's agent
    /// takes part.
    Launch(launch::LaunchArgs),
    /// Build, inspect and remove a multi-host lab of network namespaces (needs root).
    Lab(lab::LabArgs),
    /// Check a workload profile (TOML) or show the plan it expands to.
    Profile(profile::ProfileArgs),
    /// A mesh of agents that test their own paths on a schedule: run it, read its status.
    Mesh(mesh::MeshArgs),
    /// Say which of this host's settings limit networking, why, and what to change.
    Doctor(doctor::DoctorArgs),
    /// Make a pre-shared key file for --key-file.
    Key(KeyArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Print the manual page fathom(1), or write one per subcommand with --out DIR.
    #[command(
        after_help = "Example:\n  fathom man --out ~/.local/share/man/man1 && man fathom-stream"
    )]
    Man(ManArgs),
}

impl Command {
    /// Finds the agents of a test's `--agents-from`, if any, and keeps them in its options.
    pub fn discover(&mut self) -> Result<(), crate::Failure> {
        let test = match self {
            Command::Test(t) => t,
            Command::Sweep(a) => &mut a.test.test,
            Command::Launch(a) if a.test.test.common().discovery.agents_from.is_some() => {
                return Err(crate::Failure::Usage(
                    "--agents-from: under launch the ranks find each other; drop it".into(),
                ))
            }
            _ => return Ok(()),
        };
        let c = test.discovery_mut()?;
        discover::resolve(&mut c.discovery, c.server.as_deref(), &c.clients)
    }
}

const COMPLETIONS_HELP: &str = "\
Examples:
  fathom completions bash > ~/.local/share/bash-completion/completions/fathom
  fathom completions zsh > ~/.zfunc/_fathom        (with fpath+=~/.zfunc in ~/.zshrc)
  fathom completions fish > ~/.config/fish/completions/fathom.fish";

/// `fathom completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `fathom man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write fathom.1 and a page per subcommand (fathom-stream.1, ...) into this directory
    /// instead of printing fathom(1).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// What a key file holds, for every --key-file's help.
pub const KEY_FILE_HELP: &str = "\
A key file holds the pre-shared key that an agent (`fathom serve --key-file`) and its
controllers (`--key-file` on the test commands) must share: any bytes, whitespace
around them ignored, at least 16 recommended. `fathom key new FILE` writes 32 random bytes as
64 hex digits, readable only by you; copy the file to every host that runs tests. The key never
crosses the network: the agent sends a random challenge and the controller answers with an
HMAC-SHA256 of it under the key.";

/// `fathom key`.
#[derive(clap::Args, Debug)]
#[command(after_help = KEY_FILE_HELP)]
pub struct KeyArgs {
    /// What to do with keys.
    #[command(subcommand)]
    pub command: KeyCommand,
}

/// `fathom key` subcommands.
#[derive(Subcommand, Debug)]
pub enum KeyCommand {
    /// Write a new random key to FILE (mode 0600); an existing FILE is never overwritten.
    #[command(
        after_help = "Example:\n  fathom key new k && fathom serve --listen 0.0.0.0:5301 --key-file k"
    )]
    New {
        /// The key file to create.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

/// `fathom serve`.
#[derive(clap::Args, Debug)]
#[command(group = clap::ArgGroup::new("keeps_results").args(["iperf3", "mesh"]).multiple(true))]
#[command(after_help = "\
Examples:
  fathom serve                                   loopback only, no key needed
  fathom serve --listen 0.0.0.0:5301 --key-file k
  fathom serve --listen [::]:5301 --insecure     any controller may connect (lab use only)
  fathom serve --metrics 127.0.0.1:9464          and OpenMetrics for Prometheus at /metrics
  fathom serve --listen 0.0.0.0:5301 --key-file k --mesh mesh.toml   and run its mesh share
  fathom serve --listen 0.0.0.0:5301 --key-file k --mesh mesh.toml --metrics 0.0.0.0:9464
                                                 ... with its share's figures at /metrics")]
pub struct ServeArgs {
    /// Address and port to listen on for control connections.
    #[arg(long, default_value = "127.0.0.1:5301", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// File holding the pre-shared key; controllers must prove they know it (make one with
    /// `fathom key new FILE`; `fathom key --help` says what it holds).
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Listen beyond loopback without a key.
    #[arg(long)]
    pub insecure: bool,
    /// Longest test accepted (warm-up + measured time).
    #[arg(long, default_value = "1h", value_parser = units::parse_duration, value_name = "DUR")]
    pub max_duration: u64,
    /// Most data connections in one test.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub max_flows: u32,
    /// Most tests at once (connections still in the handshake do not count).
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_tests: usize,
    /// Most memory the running tests may need together, by their plans (threads x buffers and
    /// per-flow state); one test may use at most 1G of it.
    #[arg(long, default_value = "2G", value_parser = units::parse_size, value_name = "SIZE")]
    pub max_memory: u64,
    /// Serve file copies (`fathom file`) below this directory; without it they are refused.
    #[arg(long, value_name = "DIR")]
    pub files_root: Option<PathBuf>,
    /// Test-only: pretend this agent's clock runs this far ahead.
    #[arg(long, hide = true, value_parser = units::parse_duration, value_name = "DUR")]
    pub test_clock_shift: Option<u64>,
    /// Certificate (PEM, end entity first) TLS tests' data ports present (default: a
    /// self-signed one made by the first TLS test).
    #[arg(long, value_name = "PEM", requires = "key")]
    pub cert: Option<PathBuf>,
    /// The private key (PEM) of --cert.
    #[arg(long, value_name = "PEM", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Also answer stock iperf3 clients (`iperf3 -c`) on this port (default 5201), one test
    /// at a time; fathom's own figures go to this log.
    #[arg(long, value_name = "PORT", num_args = 0..=1, require_equals = true, default_missing_value = "5201")]
    pub iperf3: Option<u16>,
    /// Let the iperf3 port listen on --listen's address without --key-file (iperf3's protocol
    /// has no key); without either it listens on loopback only.
    #[arg(long, requires = "iperf3")]
    pub iperf3_open: bool,
    /// iperf3's RSA authentication: the private key (PEM, unencrypted) whose public half the
    /// clients' `--rsa-public-key-path` names; clients without valid credentials are refused.
    #[arg(long, value_name = "PEM", requires_all = ["iperf3", "authorized_users_path"])]
    pub rsa_private_key_path: Option<PathBuf>,
    /// The iperf3 users admitted: `USER,SHA256-HEX` a line, the hash of "{USER}PASSWORD".
    #[arg(long, value_name = "CSV", requires = "rsa_private_key_path")]
    pub authorized_users_path: Option<PathBuf>,
    /// How far an iperf3 client's credentials' time may be from this host's clock (default 10).
    #[arg(long, value_name = "SECONDS", requires = "rsa_private_key_path",
          value_parser = clap::value_parser!(u64).range(..=86_400))]
    pub time_skew_threshold: Option<u64>,
    /// Serve OpenMetrics at http://ADDR/metrics for Prometheus: the agent's own counts and,
    /// with --mesh, its share's figures (docs/metrics.md). No key guards it: bind it where only
    /// Prometheus reaches.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<SocketAddr>,
    /// Save what fathom measured of each iperf3 test it answers (its end's bytes, TCP_INFO per
    /// second, CPU) in this results database, for `fathom runs --store PATH`; with --mesh, the
    /// mesh's results (default: the usual store, $FATHOM_STORE or ~/.local/share/fathom).
    #[arg(long = "store", value_name = "PATH", requires = "keeps_results")]
    pub iperf3_store: Option<PathBuf>,
    /// Also run this agent's share of a mesh (docs/mesh.md): the tests it is the source of,
    /// each booked at both ends; `fathom mesh status FILE --agents` reads the results.
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// With --mesh: which member this agent is (default: this host's name).
    #[arg(long, value_name = "NAME", requires = "mesh")]
    pub mesh_as: Option<String>,
}

/// Reads a key file: its contents, surrounding whitespace removed.
pub fn read_key(path: &std::path::Path) -> Result<Vec<u8>, error::KeyFileError> {
    let path = path.to_path_buf();
    let text = match read_small(&path, MAX_SMALL_FILE) {
        Ok(text) => text,
        Err(source) => return Err(error::KeyFileError::Unreadable { path, source }),
    };
    let key = text.trim_ascii().to_vec();
    if key.is_empty() {
        return Err(error::KeyFileError::Empty { path });
    }
    Ok(key)
}
