//! Options of the method commands: `sweep`, `runs`, `show`, `compare`, `report`, `plot` and
//! `study`.

use super::common::{ReadStoreArgs, StoreArgs};
use super::test_args::{Extra, Offered, Place};
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// `fathom sweep KIND ...`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each --vary names a test option (long name, or a one-letter short name) and its values; every
combination runs, the last --vary changing fastest. Switches take on,off. `rtt` sets the round trip
of the lab's WAN links. Every point is stored as it finishes; --resume continues an interrupted sweep.

Examples:
  fathom sweep stream --vary buffer=16K,24K,32K,48K,64K,128K,256K,1M --vary parallel=1,10 -t 5s
  fathom sweep rr --vary size=4,40,100,250,536,1024,1460 --vary quickack=on,off --iterations 5
  fathom sweep udp --vary size=64,512,1472 --vary parallel=1,4 -t 5s
  fathom sweep stream --server h1 --clients h2 -n 48M --vary rtt=10ms,50ms --vary rcvbuf=64K,1M
  fathom sweep stream --vary write=1K,64K,1M --resume      continue where an interrupted run stopped")]
pub struct SweepArgs {
    /// The test to sweep, with its options.
    #[command(subcommand)]
    pub test: SweepTest,
}

/// `fathom sweep TEST ...`: the test with its options, and the sweep's own.
pub type SweepTest = Offered<VaryArgs>;

/// The sweep's own options.
#[derive(clap::Args, Debug, Clone)]
pub struct VaryArgs {
    /// An option and its values: OPTION=V1,V2,... (repeat for a cartesian product).
    #[arg(long, required = true, value_name = "OPTION=V1,V2,...")]
    pub vary: Vec<String>,
    /// Continue the newest unfinished run of this same sweep; completed points are not re-run.
    #[arg(long)]
    pub resume: bool,
}

impl Extra for VaryArgs {
    const PLACE: Place = Place::Sweep;

    /// The vary options; `--advise` and `--verify-advice` (which explain one run) are hidden,
    /// as sweep refuses them.
    fn augment(cmd: clap::Command) -> clap::Command {
        VaryArgs::augment_args(cmd)
            .mut_arg("advise", |a| a.hide(true))
            .mut_arg("verify_advice", |a| a.hide(true))
    }

    fn from_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        VaryArgs::from_arg_matches(m)
    }
}

impl SweepTest {
    /// The test's command (its kind's, as the descriptor names it), whether --json and --csv
    /// were given, the sweep's options and the store.
    pub fn parts(&self) -> (&'static str, bool, bool, &VaryArgs, &StoreArgs) {
        let common = self.test.common();
        (
            self.test.kind().descriptor().command,
            common.json,
            common.csv,
            &self.extra,
            &common.store,
        )
    }
}

/// `fathom runs`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  fathom runs                 the newest 20 runs
  fathom runs --series        sweeps and iterated tests
  fathom runs -n 100 --json")]
pub struct RunsArgs {
    /// How many, newest first.
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N")]
    pub limit: usize,
    /// List series (sweeps, iterated tests, studies) instead of single runs.
    #[arg(long)]
    pub series: bool,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// What `runs` and `compare` share: the database they read, and a table or one JSON document.
#[derive(clap::Args, Debug)]
pub struct ReadArgs {
    /// One JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: ReadStoreArgs,
}

/// `fathom show`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  fathom show 42              run 42 as a table
  fathom show s7 --json       series s7 as JSON
  fathom show 42 --csv        its intervals as CSV")]
pub struct ShowArgs {
    /// A run id (42) or a series id (s7).
    #[arg(value_name = "RUN")]
    pub run: String,
    /// One JSON document on stdout.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// CSV on stdout.
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub store: ReadStoreArgs,
}

/// `fathom compare`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Two runs are compared interval by interval, each run counting only as the independent samples
its correlated intervals are worth; two series point by point, by their iterations (the firmer
basis). A difference is called significant when Welch's t-test gives p below 1 - LEVEL.

Examples:
  fathom compare 41 42
  fathom compare s3 s4 --level 99 --json")]
pub struct CompareArgs {
    /// The baseline: a run id (42) or a series id (s7).
    #[arg(value_name = "RUN_A")]
    pub a: String,
    /// The one compared with it.
    #[arg(value_name = "RUN_B")]
    pub b: String,
    /// Confidence level for significance, percent.
    #[arg(long, default_value_t = 95.0, value_name = "PCT")]
    pub level: f64,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `fathom report`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  fathom report 42 -o run42.html
  fathom report s7 s8 41 -o sweeps.html --title 'Buffers on the lab'")]
pub struct ReportArgs {
    /// Runs (42) and series (s7) to include, in order.
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    /// The HTML file to write.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// The page's title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    #[command(flatten)]
    pub store: ReadStoreArgs,
}

/// `fathom plot`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
A run plots its intervals over time; a series plots the metric against a swept option, one line
per combination of the others.

Examples:
  fathom plot 42 --metric bits_per_second -o fig.svg
  fathom plot 42 --metric packets -o acks.png        data and ACK packets/s over time
  fathom plot s7 --metric bits_per_second --x buffer -o buffers.png
  fathom plot s8 --latency -o latency.svg              p50/p90/p99 against the swept payload")]
pub struct PlotArgs {
    /// A run id (42) or a series id (s7).
    #[arg(value_name = "RUN")]
    pub run: String,
    /// What to plot (default: the main figure: throughput, or transactions/s).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Series: the swept option on the x axis (default: the first).
    #[arg(long, value_name = "OPTION")]
    pub x: Option<String>,
    /// Series: latency percentiles against the swept option.
    #[arg(long, conflicts_with = "metric")]
    pub latency: bool,
    /// The image to write: .svg or .png.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Image width, pixels.
    #[arg(long, default_value_t = 960, value_name = "PX")]
    pub width: u32,
    /// Image height, pixels.
    #[arg(long, default_value_t = 540, value_name = "PX")]
    pub height: u32,
    #[command(flatten)]
    pub store: ReadStoreArgs,
}

/// `fathom study`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  fathom study --list
  fathom study socket-buffers --quick          under a minute: a table, plots, an HTML page
  fathom study rr-payload -o rr-study
  fathom study window-vs-rtt                   builds a two-host lab with a WAN link (root)")]
pub struct StudyArgs {
    /// The study to run (see --list).
    #[arg(value_name = "NAME", required_unless_present = "list")]
    pub name: Option<String>,
    /// Describe the studies.
    #[arg(long)]
    pub list: bool,
    /// The short form (under a minute), for a first look or CI.
    #[arg(long)]
    pub quick: bool,
    /// Directory for the table, plots and HTML page (default: ./fathom-study-NAME, or
    /// ./fathom-study-NAME-2, -3... when that holds an earlier study).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Continue an interrupted run of this study: its completed points are not re-run.
    #[arg(long)]
    pub resume: bool,
    /// One JSON document on stdout: the study's series and findings.
    #[arg(long)]
    pub json: bool,
    /// Run every sweep from h1 to h2 of a two-host lab joined by a WAN link with these
    /// parameters (e.g. "delay=10ms,rate=1G"; needs root); the lab is removed at the end.
    #[arg(long, value_name = "WAN")]
    pub lab: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}
