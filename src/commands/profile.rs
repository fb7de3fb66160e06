//! `fathom profile check|show|run`: a profile file read into its validated plan, then a line
//! that says it is good, the plan in words or JSON, or the plan run (`profile_run`).

use super::profile_file::load;
use crate::cli::profile::{ProfileArgs, ProfileCommand};
use crate::commands::output::write_stdout;
use crate::Failure;

/// Runs `fathom profile`.
pub fn run(a: &ProfileArgs) -> Result<(), Failure> {
    match &a.command {
        ProfileCommand::Check(p) => {
            let plan = load(p)?;
            let (groups, flows) = (plan.groups.len(), fathom_profile::flows(&plan));
            let s = |n: u64| if n == 1 { "" } else { "s" };
            write_stdout(
                format!(
                    "{}: ok: {groups} group{}, {flows} flow{}\n",
                    p.file.display(),
                    s(groups as u64),
                    s(flows)
                )
                .as_bytes(),
            );
        }
        ProfileCommand::Show(s) => {
            let plan = load(&s.profile)?;
            let text = if s.json {
                let mut j = serde_json::to_vec_pretty(&plan)
                    .map_err(|e| Failure::Runtime(format!("profile show: {e}")))?;
                j.push(b'\n');
                j
            } else {
                fathom_profile::show(&plan).into_bytes()
            };
            write_stdout(&text);
        }
        ProfileCommand::Run(r) => {
            let code = match &r.run.vary {
                Some(v) => super::profile_run::vary::run_vary(&r.profile, &r.run, v)?,
                None => super::profile_run::run_profile(&load(&r.profile)?, &r.run)?,
            };
            if code != std::process::ExitCode::SUCCESS {
                return Err(Failure::Reported);
            }
        }
    }
    Ok(())
}
