//! fathom's workload profiles (docs/profiles.md): a TOML file in, a validated
//! [`ProfilePlan`] out. The text is parsed with its spans kept ([`toml_edit::ImDocument`]),
//! its variables set from `[vars]`, the environment and `--set` ([`Overrides`]), every value
//! read and bounded, the flowops' order checked against each group's protocol, and the plan
//! checked by [`ProfilePlan::validate`]; any error names the file, line and column of the value
//! at fault ([`ProfileError`]). [`show`] writes the plan as the agents will run it.
#![forbid(unsafe_code)]

mod build;
mod error;
mod grammar;
mod locate;
mod read;
mod remote;
mod show;
mod size;
mod spans;
mod vars;

#[cfg(test)]
mod tests;

pub use build::DEFAULT_SEED;
pub use error::ProfileError;
pub use show::{flows, show};
pub use vars::{parse_set, Overrides, SetError, ENV_PREFIX};

use fathom_proto::profile::ProfilePlan;

/// Longest profile file read, bytes.
pub const MAX_PROFILE_FILE: usize = 1 << 20;

/// Reads the profile `text`, found at `file` (named in errors; its stem names a profile that
/// has no `name`), with the variables of `overrides`, into a validated plan.
pub fn parse(file: &str, text: &str, overrides: &Overrides) -> Result<ProfilePlan, ProfileError> {
    let at = error::Source::new(file, text);
    if text.len() > MAX_PROFILE_FILE {
        return Err(at.error(None, format!("the file is over {MAX_PROFILE_FILE} bytes")));
    }
    let doc = toml_edit::ImDocument::parse(text).map_err(|e| at.error(e.span(), e.message()))?;
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    build::profile(&at, doc.as_table(), &stem, overrides)
}
