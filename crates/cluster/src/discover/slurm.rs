//! `slurm`: the nodes of the Slurm job this runs in, from `SLURM_JOB_NODELIST` (or the older
//! `SLURM_NODELIST`), one agent per node on the default port.

use super::{Agent, Error};
use crate::hostlist::{self, HostlistError};

/// The job's nodes, in Slurm's order.
pub fn nodes() -> Result<Vec<Agent>, Error> {
    let var = ["SLURM_JOB_NODELIST", "SLURM_NODELIST"]
        .into_iter()
        .find_map(|v| std::env::var(v).ok().map(|list| (v, list)));
    let (name, list) = var.ok_or_else(|| {
        Error::Usage(
            "slurm: SLURM_JOB_NODELIST is not set; run inside a Slurm job (salloc, sbatch)".into(),
        )
    })?;
    from_list(&list).map_err(|e| Error::Usage(format!("slurm: {name}: {e}")))
}

/// The agents of a Slurm node list.
pub fn from_list(list: &str) -> Result<Vec<Agent>, HostlistError> {
    Ok(hostlist::expand(list)?
        .into_iter()
        .map(|n| Agent {
            addr: n.clone(),
            name: n,
            group: None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_node_list_is_one_agent_per_node() {
        let a = from_list("c[1-2],login").unwrap();
        let names: Vec<_> = a.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["c1", "c2", "login"]);
        assert_eq!(a[0].addr, "c1");
        assert!(from_list("c[1-").is_err());
    }
}
