//! `fathom doctor`: which of this host's settings limit networking, why, and what to change.

/// `fathom doctor`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Reads sysctls, interfaces, CPU and limits on this host and sends no traffic; it always exits 0
(it is advice), 2 for bad usage, 1 when --run names no stored run. docs/advisor.md describes
every finding and its threshold.

Examples:
  fathom doctor                  every interface but loopback
  fathom doctor --iface eth0     one interface's MTU, offloads and RPS
  fathom doctor --json           one JSON document (docs/schema/doctor.schema.json)
  fathom doctor --run 42         explain stored run 42: what limited it, what to change
  fathom stream HOST --advise    any test ends with the advisor's findings")]
pub struct DoctorArgs {
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
    /// Print one JSON document on stdout instead of the list.
    #[arg(long)]
    pub json: bool,
}
