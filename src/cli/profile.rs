//! `fathom profile`: workload profiles (docs/profiles.md) checked and shown; each subcommand
//! takes the profile file and `--set name=value` for its variables.

use clap::{Args, Subcommand};
use std::path::PathBuf;

const PROFILE_HELP: &str = "\
A profile (TOML, docs/profiles.md) describes a workload as uperf's do: groups of threads,
each flow running transactions of flowops (connect, write, read, sendto, recv, think,
disconnect). Variables ($name or ${name}) take their default from [vars], then
FATHOM_VAR_<name> in the environment, then --set name=value.

Examples:
  fathom profile run profiles/netperf-stream.toml
  fathom profile run profiles/two-hosts.toml --set h1=HOST1 --set h2=HOST2 --key-file k
  fathom profile run profiles/many-flows.toml --vary threads=1,16,64
  fathom profile run profiles/rrul.toml --plot rrul.svg
  fathom profile check profiles/netperf-stream.toml
  fathom profile show profiles/many-flows.toml --set threads=8
  fathom profile show profiles/rrul.toml --json";

/// `fathom profile`.
#[derive(Args, Debug)]
#[command(after_help = PROFILE_HELP)]
pub struct ProfileArgs {
    /// What to do with the profile.
    #[command(subcommand)]
    pub command: ProfileCommand,
}

/// `fathom profile` subcommands.
#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// Validate a profile: "FILE: ok: N groups, M flows", or the first error as
    /// FILE:LINE:COLUMN: message (exit 2).
    Check(ProfileFile),
    /// Print the expanded plan as the agents will run it (with --json, as JSON).
    Show(ProfileShowArgs),
    /// Run the profile: every group as one test, all groups at once, then the totals (exit 1
    /// when a group's test failed).
    Run(Box<ProfileRunCommand>),
}

/// `fathom profile run`.
#[derive(Args, Debug)]
pub struct ProfileRunCommand {
    /// The profile and its variables.
    #[command(flatten)]
    pub profile: ProfileFile,
    /// Where the groups find their agents, and how results are printed and kept.
    #[command(flatten)]
    pub run: super::profile_run::ProfileRunArgs,
}

/// A profile file and its variables.
#[derive(Args, Debug)]
pub struct ProfileFile {
    /// The profile (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Set a variable, over its [vars] default and FATHOM_VAR_<name> (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = fathom_profile::parse_set)]
    pub sets: Vec<(String, String)>,
}

/// `fathom profile show`.
#[derive(Args, Debug)]
pub struct ProfileShowArgs {
    /// The profile and its variables.
    #[command(flatten)]
    pub profile: ProfileFile,
    /// Print the plan as one JSON document.
    #[arg(long)]
    pub json: bool,
}
