//! fathom's glue: the command line, the agent, the controller and the commands that join them.
//! The mechanisms live in the workspace crates (proto, engine, report, lab, wan); this crate
//! wires them together, and the `fathom` binary is a thin `main` over it.

pub mod agent;
pub mod cli;
pub mod commands;
pub mod connect;
pub mod controller;
pub mod fdlimit;
pub mod method;
pub mod stdout;
pub mod testbed;

/// Why a command did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// The command line is wrong (exit 2).
    Usage(String),
    /// The test or the agent failed (exit 1).
    Runtime(String),
    /// Already reported on stdout/stderr; only the exit code is left (exit 1).
    Reported,
}

/// Bad options are bad usage (exit 2).
impl From<cli::error::ArgsError> for Failure {
    fn from(e: cli::error::ArgsError) -> Self {
        Failure::Usage(e.to_string())
    }
}

impl From<cli::error::KeyFileError> for Failure {
    /// A `--key-file` that gives no key is bad usage.
    fn from(e: cli::error::KeyFileError) -> Failure {
        Failure::Usage(e.to_string())
    }
}
