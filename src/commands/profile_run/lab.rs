//! `profile run --lab LAB`: groups whose `remote` names a host of the lab. The profile then
//! runs as a test command does from inside the lab: the whole run (every group's connecting
//! end, so the shared barriers too) moves into the network namespace of the lab's first host,
//! each lab host name becomes the address of that host's agent, and the lab's key is used
//! unless `--key-file` names another.

use crate::cli::profile_run::ProfileRunArgs;
use crate::Failure;
use fathom_lab::Lab;
use fathom_proto::profile::ProfilePlan;

/// Where and what to run when a group's remote names a host of the lab (`--lab`, or the one
/// running lab): the first host's namespace, the plan with lab host names replaced by their
/// agents' addresses, and the options without the lab. None when no remote names a lab host.
pub fn in_lab(
    plan: &ProfilePlan,
    args: &ProfileRunArgs,
) -> Result<Option<(String, ProfilePlan, ProfileRunArgs)>, Failure> {
    if plan.groups.iter().all(|g| g.remote.is_none()) {
        return Ok(None);
    }
    let lab = match (&args.lab, fathom_lab::resolve_name(args.lab.as_deref())) {
        (Some(_), Err(e)) => return Err(Failure::Usage(format!("--lab: {e}"))),
        (None, Err(_)) => return Ok(None),
        (named, Ok(name)) => match Lab::load(&name) {
            Ok(lab) => lab,
            Err(e) if named.is_some() => return Err(Failure::Usage(format!("--lab {name}: {e}"))),
            Err(_) => return Ok(None),
        },
    };
    let mut plan = plan.clone();
    let mut any = false;
    for g in &mut plan.groups {
        let Some(remote) = &g.remote else { continue };
        let (name, port) = match remote.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (remote.as_str(), None),
        };
        let Some(host) = lab.host(name) else { continue };
        let addr = host.agent_addr();
        g.remote = Some(match port {
            Some(p) => format!("{}:{p}", addr.ip()),
            None => addr.to_string(),
        });
        any = true;
    }
    if !any {
        return Ok(None);
    }
    let first = lab
        .hosts()
        .first()
        .ok_or_else(|| Failure::Usage(format!("lab {} has no host", lab.name())))?;
    let args = ProfileRunArgs {
        lab: None,
        key_file: args.key_file.clone().or_else(|| Some(lab.key_file())),
        ..args.clone()
    };
    Ok(Some((first.netns.clone(), plan, args)))
}
