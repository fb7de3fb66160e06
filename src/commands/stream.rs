//! `fathom stream`.

use crate::cli::stream::StreamArgs;
use crate::Failure;

/// Runs a stream test and prints its report.
pub fn run(a: &StreamArgs, argv: &[String]) -> Result<(), Failure> {
    let plan = a.plan().map_err(Failure::Usage)?;
    a.tls.check_ktls().map_err(Failure::Runtime)?;
    if a.tls.compare_clear {
        return super::compare_clear::run(&a.common, plan, argv);
    }
    super::test::run(&a.common, plan, argv)
}
