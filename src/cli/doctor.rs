//! `fathom doctor`: which of this host's settings limit networking, why, and what to change.

/// `fathom doctor`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Reads sysctls, interfaces, CPU and limits on this host and sends no traffic; it always exits 0
(it is advice), 2 for bad usage. docs/advisor.md describes every finding and its threshold.

Examples:
  fathom doctor                  every interface but loopback
  fathom doctor --iface eth0     one interface's MTU, offloads and RPS
  fathom doctor --json           one JSON document (docs/schema/doctor.schema.json)")]
pub struct DoctorArgs {
    /// Look at this interface only (default: every interface but loopback).
    #[arg(long, value_name = "IFACE")]
    pub iface: Option<String>,
    /// Print one JSON document on stdout instead of the list.
    #[arg(long)]
    pub json: bool,
}
