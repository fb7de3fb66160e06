//! `fathom launch TEST ...`: the options of a test run by a launcher's processes (srun,
//! mpirun/mpiexec), one rank each.

use super::error::ArgsError;
use super::test_args::{Extra, Offered, Place};
use super::units::parse_duration;
use fathom_cluster::rendezvous::DEFAULT_PORT;

/// Longest `--rendezvous-timeout`.
const MAX_RENDEZVOUS_NS: u64 = 3600 * 1_000_000_000;

/// `fathom launch`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Every process of the launch runs the same command; each reads its rank and the number of
processes from its launcher's environment (Open MPI's OMPI_COMM_WORLD_RANK/SIZE, MPICH's
PMI_RANK/PMI_SIZE, PMIX_RANK, Slurm's SLURM_PROCID/SLURM_NTASKS). Rank 0 is the controller; every
rank runs an agent; rank 0's agent (or --server-rank's) is the server and the others' are the
clients, each with -P connections. The other ranks register with rank 0 on port 5300 of
--controller, else of the first node of the Slurm step (rank 0's node under Slurm's block and
cyclic distributions), else of loopback when Open MPI placed every rank on one node. Every rank
exits with the test's exit code; only rank 0 prints the results.

Examples:
  srun -N 33 fathom launch stream -P 2            33 nodes: 1 server, 32 clients x 2 connections
  mpirun -np 8 --hostfile hosts fathom launch rr --controller node01
  srun -n 4 fathom launch stream -n 1G --key-file ~/.fathom.key --json")]
pub struct LaunchArgs {
    /// Rank 0's host (and port) as the other ranks reach it (default: the first node of the
    /// Slurm step; loopback when Open MPI placed every rank on this node).
    #[arg(long, global = true, value_name = "HOST[:PORT]")]
    pub controller: Option<String>,
    /// The port rank 0 listens on for the other ranks (unless --controller names one).
    #[arg(long, global = true, default_value_t = DEFAULT_PORT, value_name = "PORT")]
    pub rendezvous_port: u16,
    /// How long rank 0 waits for every rank to register, and a rank to reach rank 0.
    #[arg(long, global = true, default_value = "60s", value_parser = parse_duration, value_name = "DUR")]
    pub rendezvous_timeout: u64,
    /// The rank whose agent is the server; every other rank's agent is a client.
    #[arg(long, global = true, default_value_t = 0, value_name = "RANK")]
    pub server_rank: u32,
    /// The test every rank takes part in.
    #[command(subcommand)]
    pub test: LaunchTest,
}

/// `fathom launch TEST ...`: the test every rank takes part in; launch adds no options to it.
pub type LaunchTest = Offered<()>;

impl Extra for () {
    const PLACE: Place = Place::Launch;

    fn augment(cmd: clap::Command) -> clap::Command {
        cmd
    }

    fn from_matches(_: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(())
    }
}

impl LaunchArgs {
    /// Checks the options every rank can check alone (the test's plan included); errors name
    /// the flag.
    pub fn check(&self) -> Result<(), ArgsError> {
        let c = self.test.test.common();
        if c.server_name().is_some() || !c.clients.is_empty() || c.lab.is_some() {
            return Err(ArgsError::flag(
                "HOST/--server/--clients/--lab",
                "under launch the ranks' agents are the server (--server-rank) and the clients",
            ));
        }
        if self.test.test.tls().is_some_and(|t| t.compare_clear) {
            return Err(ArgsError::flag(
                "--compare-clear",
                "not available under launch",
            ));
        }
        if self.rendezvous_timeout == 0 || self.rendezvous_timeout > MAX_RENDEZVOUS_NS {
            return Err(ArgsError::flag(
                "--rendezvous-timeout",
                "must be longer than 0 and at most 1h",
            ));
        }
        self.test.test.plan().map(drop)
    }
}
