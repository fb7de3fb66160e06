//! What can go wrong in a sweep before or between its tests: an axis that does not parse, a
//! point's command line the test refuses, and the lab's WAN links that the `rtt` and `rate`
//! pseudo-options set and put back. Each message names the flag or the link.

use crate::cli::error::{ArgsError, ValueError};

/// A `--vary` value that is not an axis.
#[derive(Debug, thiserror::Error)]
pub enum AxisError {
    /// No `=` between the option and its values.
    #[error("--vary: '{0}' is not OPTION=V1,V2,...; try buffer=16K,64K")]
    NotAnAxis(String),
    /// An empty option name or no values.
    #[error("--vary: '{0}' names no option or no values")]
    Empty(String),
}

/// A point's command line that does not make a plan.
#[derive(Debug, thiserror::Error)]
pub(super) enum PointError {
    /// The command line parser's first line, without its "error: ".
    #[error("{0}")]
    Usage(String),
    /// The test's own options refuse the point's values.
    #[error(transparent)]
    Args(#[from] ArgsError),
    /// The command is not a test.
    #[error("only stream, rr, crr, udp and file can be swept")]
    NotATest,
}

/// The lab's WAN links could not be read, set or put back.
#[derive(Debug, thiserror::Error)]
pub(super) enum LinkError {
    /// Saving the links before the first point.
    #[error("reading the lab's WAN links: {0}")]
    Save(fathom_lab::Error),
    /// Putting one link back.
    #[error("{name}: {source}")]
    Restore {
        /// The link.
        name: String,
        /// Why it could not be set.
        source: fathom_lab::Error,
    },
    /// An `rtt` value that is not a duration.
    #[error(transparent)]
    Rtt(#[from] ValueError),
    /// A pseudo-option without a lab.
    #[error("--vary {0} needs the test to run between lab hosts joined by a WAN link")]
    NoLab(String),
    /// A pseudo-option with a lab that has no WAN link.
    #[error("--vary {axis}: lab {lab} has no WAN link (lab up --wan ...)")]
    NoWanLink {
        /// The pseudo-option.
        axis: String,
        /// The lab's name.
        lab: String,
    },
    /// Reading or setting the links for a point.
    #[error(transparent)]
    Lab(#[from] fathom_lab::Error),
}
