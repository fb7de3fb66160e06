//! `fathom rr` and `fathom crr`.

use crate::cli::rr::RrArgs;
use crate::Failure;

/// Runs a request/response test (`crr`: a connection per transaction) and prints its report.
pub fn run(a: &RrArgs, crr: bool, argv: &[String]) -> Result<(), Failure> {
    let plan = a.plan(crr).map_err(Failure::Usage)?;
    a.tls.check_ktls().map_err(Failure::Runtime)?;
    if a.tls.compare_clear {
        return super::compare_clear::run(&a.common, plan, argv);
    }
    super::test::run(&a.common, plan, argv)
}
