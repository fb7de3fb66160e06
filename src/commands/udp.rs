//! `fathom udp`.

use crate::cli::udp::UdpArgs;
use crate::Failure;

/// Runs a UDP stream test and prints its report.
pub fn run(a: &UdpArgs, argv: &[String]) -> Result<(), Failure> {
    let plan = a.plan().map_err(Failure::Usage)?;
    super::test::run(&a.common, plan, argv)
}
