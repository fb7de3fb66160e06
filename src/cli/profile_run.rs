//! `fathom profile run`'s options: where the profile's groups find their agents, how results
//! are printed and kept. What runs comes from the profile file (`fathom_proto::profile`).

use super::common::{CommonArgs, StoreArgs};
use super::units::parse_duration;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// Options of `fathom profile run FILE`.
#[derive(Args, Debug, Clone, Default)]
pub struct ProfileRunArgs {
    /// The lab whose host names the groups' `remote`s use (default: the one running lab).
    #[arg(long, value_name = "NAME")]
    pub lab: Option<String>,
    /// Pre-shared key file for the agents (the same file they serve with).
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Print one JSON document on stdout: every group's report and the totals.
    #[arg(long)]
    pub json: bool,
    /// Interval between samples.
    #[arg(short = 'i', long, value_parser = parse_duration, value_name = "DUR", allow_hyphen_values = true)]
    pub interval: Option<u64>,
    /// Congestion control of every group's connections, at both ends (e.g. cubic, bbr, reno);
    /// default: the hosts'.
    #[arg(long, value_name = "ALGO")]
    pub cc: Option<String>,
    /// Run the profile once per value of one of its variables (as --set NAME=V each time)
    /// and print each point's totals.
    #[arg(long, value_name = "NAME=V1,V2,...", value_parser = parse_vary)]
    pub vary: Option<(String, Vec<String>)>,
    /// Draw latency under load over time into this image (.svg or .png): probe latency and
    /// the load's throughput on one timeline (a profile with probe groups, as rrul.toml).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The point of a `--vary` sweep being run (`NAME=VALUE`), recorded with its runs.
    #[arg(skip)]
    pub point: Option<String>,
}

/// Most values one `--vary` may list.
pub const MAX_POINTS: usize = 64;

/// Why a `--vary NAME=V1,V2,...` is refused.
#[derive(Debug, thiserror::Error)]
pub enum VaryError {
    /// Not `name=value`, as `--set` reads it.
    #[error(transparent)]
    Set(#[from] fathom_profile::SetError),
    /// One of the values is empty.
    #[error("'{0}': an empty value; try --vary threads=1,16,64")]
    Empty(String),
    /// More than [`MAX_POINTS`] values.
    #[error("'{0}': more than {MAX_POINTS} values")]
    TooMany(String),
}

/// Parses `NAME=V1,V2,...` (the value of `--vary`): a variable and its values.
pub fn parse_vary(arg: &str) -> Result<(String, Vec<String>), VaryError> {
    let (name, values) = fathom_profile::parse_set(arg)?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(VaryError::Empty(arg.into()));
    }
    if values.len() > MAX_POINTS {
        return Err(VaryError::TooMany(arg.into()));
    }
    Ok((name, values))
}

impl ProfileRunArgs {
    /// The shared test options for a group whose agent is `remote` (none: an in-process
    /// agent), as a test command would have them.
    pub fn common(&self, remote: Option<&str>) -> Result<CommonArgs, clap::Error> {
        let cmd = <CommonArgs as Args>::augment_args(clap::Command::new("profile"));
        let mut c = cmd
            .try_get_matches_from(["profile"])
            .and_then(|m| CommonArgs::from_arg_matches(&m))?;
        c.server = remote.map(str::to_string);
        c.lab = self.lab.clone();
        c.key_file = self.key_file.clone();
        c.json = self.json;
        c.quiet = true;
        if let Some(i) = self.interval {
            c.interval = i;
        }
        c.store = self.store.clone();
        Ok(c)
    }
}
