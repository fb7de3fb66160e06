//! [`KindArgs`]: what a test kind's options give the commands that run it. Each kind's args
//! file implements it; `TestArgs` holds one of them.

use super::common::CommonArgs;
use super::error::{ArgsError, Sets};
use super::tls::TlsArgs;
use fathom_proto::plan::{KindId, TestPlan};

/// What every test's options give the commands that run it; each kind's args file implements it.
pub trait KindArgs {
    /// Validates the options into a plan of `kind` (rr and crr share their options); errors
    /// name the flag.
    fn plan_for(&self, kind: KindId) -> Result<TestPlan, ArgsError>;
    /// The plan fields the kind's own options set (the shared and TLS options' are known).
    fn sets(&self) -> &'static [Sets];
    /// The TLS options, for the kinds that take them.
    fn tls(&self) -> Option<&TlsArgs> {
        None
    }
    /// The shared options `common` as the test runs with them (a copy names its agent in its
    /// path).
    fn run_common(&self, common: &CommonArgs) -> Result<CommonArgs, ArgsError> {
        Ok(common.clone())
    }
    /// Refuses `--agents-from` where the kind runs between ends named otherwise.
    fn discovery(&self) -> Result<(), ArgsError> {
        Ok(())
    }
}
