//! Sweeps: one test run at every combination of the values of one or more options
//! (`--vary buffer=16K,64K --vary parallel=1,10`), the last option varying fastest, each point
//! iterated as `--iterations` says. Every point is validated before anything runs; each point's
//! runs are stored as they finish and the series after every point, so an interrupted sweep
//! resumes (`--resume`) without re-running the points it completed.
//!
//! A point is the test's own command line with the point's values added (`--buffer=64K`, or the
//! bare flag for `quickack=on`), parsed by the same code as a single test: any test option can
//! be swept, and a bad value is refused with the option's own message. Two pseudo-options exist:
//! `rtt`, the round trip of the lab's WAN emulator links (half of it each way), and `rate`, their
//! rate (`rate=100M,1G`); the links are put back as they were when the sweep ends.
//!
//! Ctrl-C stops a sweep after the running test (which is stored); a second Ctrl-C aborts it.

mod error;
mod plan;
mod points;
mod restore;
mod run;

pub use error::AxisError;
pub use plan::{PointPlan, SweepPlan, PSEUDO};
pub use points::{combinations, parse_axis, prepare};
pub use run::{execute, new_series, search};
