//! `fathom mesh`: agents that test their own paths on a schedule (docs/mesh.md). The file
//! names the members and the tests; these are the options of running it and reading it.

use super::common::ReadStoreArgs;
use super::units::parse_duration;
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

const MESH_EXAMPLES: &str = "\
Examples:
  fathom mesh check mesh.toml              read the file, show the schedule it makes
  fathom mesh run mesh.toml                run every member's tests from here until Ctrl-C
  fathom mesh run mesh.toml --for 2m       ... for two minutes, then print the status
  fathom mesh status mesh.toml             the matrix: latest figures, changes, alerts, culprit
  fathom mesh status mesh.toml --json      the same as one JSON document (docs/mesh.md)
  fathom serve --mesh mesh.toml            on every member: its own share, booked at both ends
  fathom serve --mesh mesh.toml --metrics 0.0.0.0:9464   ... and its figures for Prometheus
  fathom mesh status mesh.toml --agents    the matrix from those agents' own stores
  fathom mesh report mesh.toml -o mesh.html  an HTML page: heat-maps and each pair's history

A mesh in a lab, in three commands:
  fathom lab up --hosts 4 --wan delay=5ms
  fathom mesh run mesh.toml --for 5m       (members h1..h4, `lab = \"lab\"` in [members])
  fathom mesh status mesh.toml";

/// `fathom mesh`.
#[derive(Debug, Args)]
#[command(after_help = MESH_EXAMPLES)]
pub struct MeshArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: MeshCommand,
}

/// The `fathom mesh` subcommands.
#[derive(Debug, Subcommand)]
pub enum MeshCommand {
    /// Read a mesh file and show the schedule it makes: members, tests, pairs, load.
    #[command(after_help = "Example:\n  fathom mesh check mesh.toml")]
    Check(CheckArgs),
    /// Run a mesh from this host: every member's tests, between their agents, on schedule.
    #[command(after_help = "\
Examples:
  fathom mesh run mesh.toml
  fathom mesh run mesh.toml --for 10m --store /var/lib/fathom/mesh.db
  fathom mesh run mesh.toml --metrics 127.0.0.1:9464    and every member's figures for Prometheus
Alerts raised and cleared, and members down and up, are printed as they happen; at the end
(--for, or Ctrl-C) the status matrix.")]
    Run(RunArgs),
    /// Show a mesh's status: per test, a matrix of sources by targets with the latest figure,
    /// its change against the pair's baseline and alerts; members down; the likely culprit.
    #[command(after_help = "\
Examples:
  fathom mesh status mesh.toml
  fathom mesh status mesh.toml --json
  fathom mesh status mesh.toml --agents     ask the members' agents (fathom serve --mesh)")]
    Status(StatusArgs),
    /// Write a mesh's report: one self-contained HTML page with the headline (members, down,
    /// alerts, likely culprit), a heat-map of the matrix per test and each pair's history as a
    /// chart (its figure, its band, its alerts shaded).
    #[command(after_help = "\
Examples:
  fathom mesh report mesh.toml -o mesh.html
  fathom mesh report mesh.toml --since 1h --store /var/lib/fathom/mesh.db
The heat-map shows each pair's latest figure, as `mesh status` does; --since limits the charts
to the runs of that last span. A mesh with no runs stored yet gets a page saying so.")]
    Report(ReportArgs),
}

/// `fathom mesh check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The mesh file (TOML; docs/mesh.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// `fathom mesh run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The mesh file (TOML; docs/mesh.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Stop after this long (default: run until Ctrl-C).
    #[arg(long = "for", value_parser = parse_duration, value_name = "DUR")]
    pub run_for: Option<u64>,
    /// The agents' key file (default: the file's [mesh] key_file; lab hosts use their lab's).
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Print the status at the end as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// The results database every test goes into (default: $FATHOM_STORE, else
    /// ~/.local/share/fathom/fathom.db).
    #[arg(long = "store", value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Serve every member's figures as OpenMetrics at http://ADDR/metrics for Prometheus
    /// while the mesh runs (docs/metrics.md). No key guards it: bind it where only
    /// Prometheus reaches.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<SocketAddr>,
}

/// `fathom mesh status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The mesh file (TOML; docs/mesh.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Ask each member's agent (run as `fathom serve --mesh FILE`) for its results instead of
    /// reading this host's store.
    #[arg(long)]
    pub agents: bool,
    /// The agents' key file, with --agents (default: the file's [mesh] key_file).
    #[arg(long, value_name = "PATH", requires = "agents")]
    pub key_file: Option<PathBuf>,
    /// Print one JSON document (docs/mesh.md, docs/schema/mesh-status.schema.json).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: ReadStoreArgs,
}

/// `fathom mesh report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The mesh file (TOML; docs/mesh.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The HTML file to write (default: mesh-NAME.html here, NAME the mesh's name).
    #[arg(short = 'o', long, value_name = "OUT.html")]
    pub output: Option<PathBuf>,
    /// Chart only the runs of this last span, e.g. 1h (default: every stored run).
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub since: Option<u64>,
    #[command(flatten)]
    pub store: ReadStoreArgs,
}
