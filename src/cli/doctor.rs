//! `fathom doctor`: which of this host's settings limit networking, why, and what to change.

/// `fathom doctor`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Reads sysctls, interfaces, CPU and limits on this host and sends no traffic; it always exits 0
(it is advice), 2 for bad usage, 1 when --run names no stored run. docs/advisor.md describes
every finding and its threshold.

With HOST it reads that host's settings too, through its agent (`fathom serve`), then probes
the path (20 rr transactions for the RTT, one stream for 2 s) and explains the stream; that
sends traffic to HOST only.

Examples:
  fathom doctor                  every interface but loopback
  fathom doctor HOST --key-file k   both ends' settings, then a short probe of the path
  fathom doctor --lab lab        every lab host's settings and every emulated link
  fathom doctor --iface eth0     one interface's MTU, offloads and RPS
  fathom doctor --json           one JSON document (docs/schema/doctor.schema.json)
  fathom doctor --run 42         explain stored run 42: what limited it, what to change
  fathom doctor --run 42 --verify --iterations 3   re-run it with the top finding's option
  fathom stream HOST --advise    any test ends with the advisor's findings")]
pub struct DoctorArgs {
    /// An agent to look at as well: HOST[:PORT] (`fathom serve` there), or a lab host.
    #[arg(value_name = "HOST", conflicts_with_all = ["run", "root"])]
    pub host: Option<String>,
    /// Every host of lab LAB (through its agent, with the lab's key) and every emulated link
    /// against the hosts at its ends; sends no test traffic.
    #[arg(long, value_name = "LAB", conflicts_with_all = ["host", "run", "root"])]
    pub lab: Option<String>,
    /// Pre-shared key file for HOST's agent (`fathom key --help` says what it holds).
    #[arg(long, value_name = "PATH", requires = "host")]
    pub key_file: Option<std::path::PathBuf>,
    /// Explain stored run RUN (an id from `fathom runs`): what limited it and what to change,
    /// after this host's settings.
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    #[command(flatten)]
    pub store: super::common::ReadStoreArgs,
    /// Read the settings from the tree below DIR (proc/sys, sys) instead of this host's (for tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<std::path::PathBuf>,
    /// Look at this interface only (default: every interface but loopback).
    #[arg(long, value_name = "IFACE")]
    pub iface: Option<String>,
    /// With --run: re-run the stored test with the fathom option its top finding names, and
    /// as stored, alternately, and print the ratio after / before with its confidence interval
    /// (a system change is printed, never applied). It sends the stored test's traffic again.
    #[arg(long, requires = "run")]
    pub verify: bool,
    /// With --verify, when the top finding names a sysctl each network namespace has its own
    /// of (net.ipv4.tcp_rmem, ...) and the run was in a lab: set it in the test's lab
    /// namespaces for the runs with the change, and back after.
    #[arg(long, requires = "verify")]
    pub apply: bool,
    /// With --verify: runs of each, before and after (2 to 20).
    #[arg(long, value_name = "N", default_value = "3", value_parser = clap::value_parser!(u32).range(2..=20))]
    pub iterations: u32,
    /// Print one JSON document on stdout instead of the list.
    #[arg(long)]
    pub json: bool,
}
