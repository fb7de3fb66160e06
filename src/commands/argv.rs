//! A test named by its arguments as typed after `fathom` (the doctor's probes and checks):
//! parsed and validated as the command line would, and run once, not stored.

use crate::cli::file::FileArgs;
use crate::cli::test_args::TestArgs;
use crate::cli::{Cli, Command};
use crate::testbed::Testbed;
use crate::Failure;
use clap::Parser;
use fathom_report::Report;

/// The test `argv` (as typed after `fathom`) names, parsed and validated as the command line
/// would, run once and not stored; a test that fails is an error.
pub fn run_args(argv: &[String]) -> Result<Report, Failure> {
    let t = test_args(argv)?;
    let plan = t.plan().map_err(|e| Failure::Usage(e.to_string()))?;
    let c = t.run_common().map_err(|e| Failure::Usage(e.to_string()))?;
    let root = match &t {
        TestArgs::File(a) if c.host.is_none() && c.server.is_none() => Some(files_root(a)?),
        _ => None,
    };
    let report = Testbed::with_files_root(&c, plan.socket.ipv6, root)?.run(plan)?;
    match report.error {
        Some(e) => Err(Failure::Runtime(format!("{}: {e}", argv.join(" ")))),
        None => Ok(report),
    }
}

/// `argv` (as typed after `fathom`) as a test's arguments.
pub fn test_args(argv: &[String]) -> Result<TestArgs, Failure> {
    let all = std::iter::once("fathom".to_string()).chain(argv.iter().cloned());
    match Cli::try_parse_from(all) {
        Ok(Cli {
            command: Command::Test(t),
        }) => Ok(t),
        Ok(_) => Err(Failure::Usage(format!(
            "'{}' is not a test",
            argv.join(" ")
        ))),
        Err(e) => Err(Failure::Usage(e.to_string())),
    }
}

/// The in-process agent's files root: `--files-root`, or the current directory.
pub fn files_root(a: &FileArgs) -> Result<std::path::PathBuf, Failure> {
    let dir = match &a.files_root {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| Failure::Runtime(format!("the current directory: {e}")))?,
    };
    dir.canonicalize()
        .map_err(|e| Failure::Usage(format!("--files-root {}: {e}", dir.display())))
}
