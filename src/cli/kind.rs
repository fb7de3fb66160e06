//! [`KindArgs`]: what a test kind's options give the commands that run it. Each kind's args
//! file implements it; [`super::test_args::TestArgs`] holds one of them.

use super::common::CommonArgs;
use super::error::ArgsError;
use super::tls::TlsArgs;
use fathom_proto::plan::{KindId, TestPlan};

/// Plan fields and the options that set them, so that a field the plan's checks refuse is named
/// by its flag as the args definitions spell it.
#[derive(Debug)]
pub struct Sets {
    /// The plan fields, as [`fathom_proto::validate::PlanError`] names them (`rr.burst`).
    pub fields: &'static [&'static str],
    /// The clap ids (field names) of the options that set them, in the order named.
    pub ids: &'static [&'static str],
    /// What the message adds after the flags, e.g. " (this side's CPUs)".
    pub note: &'static str,
}

impl Sets {
    /// `fields` are set by the options `ids`.
    pub const fn by(fields: &'static [&'static str], ids: &'static [&'static str]) -> Self {
        Sets {
            fields,
            ids,
            note: "",
        }
    }

    /// The flags as `cmd` (the test's subcommand) defines them: `-P/--parallel`,
    /// `--sndbuf/--buffer`, `SRC/DST` for positional arguments, then the note.
    pub fn flags(&self, cmd: &clap::Command) -> String {
        let named = |id: &&str| {
            let arg = cmd.get_arguments().find(|a| a.get_id() == *id)?;
            let value = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map(|v| v.to_string());
            Some(match (arg.get_short(), arg.get_long()) {
                (Some(s), Some(l)) => format!("-{s}/--{l}"),
                (None, Some(l)) => format!("--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, None) => value.unwrap_or_else(|| id.to_uppercase()),
            })
        };
        let names: Vec<String> = self.ids.iter().filter_map(named).collect();
        format!("{}{}", names.join("/"), self.note)
    }
}

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
