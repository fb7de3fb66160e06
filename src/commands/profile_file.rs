//! A profile file read into its validated plan, for `fathom profile check|show|run` and each
//! run of `profile run --vary`.

use crate::cli::profile::ProfileFile;
use crate::Failure;
use fathom_engine::small_file::read_small;
use fathom_proto::profile::ProfilePlan;

/// Reads the profile `p` names, with its `--set`s and the environment's `FATHOM_VAR_*`, into a
/// validated plan; any error is bad usage, named FILE:LINE:COLUMN.
pub fn load(p: &ProfileFile) -> Result<ProfilePlan, Failure> {
    let name = p.file.display().to_string();
    let cap = fathom_profile::MAX_PROFILE_FILE as u64;
    let bytes = read_small(&p.file, cap).map_err(|e| Failure::Usage(format!("{name}: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(format!("{name}: the file is not UTF-8 text")))?;
    let overrides = fathom_profile::Overrides::from_env(p.sets.clone());
    fathom_profile::parse(&name, &text, &overrides).map_err(|e| Failure::Usage(e.to_string()))
}
