//! This process's rank and the number of processes, as a launcher wrote them into its
//! environment, and where rank 0 runs: what `fathom launch` needs under `srun` and
//! `mpirun`/`mpiexec` without linking an MPI library.
//!
//! The launcher that started the process directly is asked first, so that `mpirun` inside a Slurm
//! allocation (whose processes also inherit the allocation's `SLURM_*` variables) is read as
//! Open MPI: Open MPI's `OMPI_COMM_WORLD_RANK`/`SIZE`, then MPICH/Hydra's `PMI_RANK`/`PMI_SIZE`,
//! then PMIx's `PMIX_RANK` (its size from `PMIX_SIZE`, Open MPI's or Slurm's), then Slurm's
//! `SLURM_PROCID` with `SLURM_STEP_NUM_TASKS` (else `SLURM_NTASKS`). Values are bounded: a size
//! of 1 to [`MAX_SIZE`], a rank below the size.

use crate::hostlist;

/// The most processes a launch may have.
pub const MAX_SIZE: u32 = 100_000;

/// Why the environment gives no usable rank; each names the variable at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RankError {
    /// No launcher's rank variable is set.
    #[error(
        "no launcher's rank in the environment: looked for {RANK_VARIABLES}; run under srun or \
         mpirun/mpiexec"
    )]
    NoLauncher,
    /// The rank variable is set, none of its size variables is.
    #[error("{rank} is set but the size is not: none of {}", .sizes.join(", "))]
    NoSize {
        /// The rank variable.
        rank: &'static str,
        /// The size variables looked for.
        sizes: &'static [&'static str],
    },
    /// A count out of its range, or not a number.
    #[error("{name}='{value}' is not a number from {lo} to {hi}")]
    BadNumber {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// The least it may be.
        lo: u32,
        /// The most it may be.
        hi: u32,
    },
    /// A Slurm node list that is not a host list.
    #[error("{name}: {error}")]
    NodeList {
        /// The variable.
        name: &'static str,
        /// What is wrong with its list.
        error: hostlist::HostlistError,
    },
}

/// Which launcher's variables gave the rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// Open MPI's `mpirun` (`OMPI_COMM_WORLD_*`).
    OpenMpi,
    /// MPICH's or Intel MPI's Hydra `mpiexec` (`PMI_RANK`/`PMI_SIZE`).
    Hydra,
    /// A PMIx launcher (`PMIX_RANK`).
    Pmix,
    /// Slurm's `srun` (`SLURM_PROCID`).
    Slurm,
}

impl std::fmt::Display for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Launcher::OpenMpi => "Open MPI",
            Launcher::Hydra => "MPICH/Hydra",
            Launcher::Pmix => "PMIx",
            Launcher::Slurm => "Slurm",
        })
    }
}

/// This process's place in the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rank {
    /// This process's rank, below `size`.
    pub rank: u32,
    /// How many processes the launcher started.
    pub size: u32,
    /// Whose variables said so.
    pub launcher: Launcher,
}

/// Where rank 0 runs, as far as the environment tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rank0 {
    /// A host name (the first node of a Slurm step).
    Host(String),
    /// Every process runs on this node (Open MPI's local size is the world size).
    Loopback,
}

/// The variables [`detect`] reads the rank from, in order, for messages.
pub const RANK_VARIABLES: &str =
    "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID (with OMPI_COMM_WORLD_SIZE, \
     PMI_SIZE, PMIX_SIZE, SLURM_STEP_NUM_TASKS or SLURM_NTASKS for the size)";

/// Reads the rank and size from the environment `var` looks up.
pub fn detect(var: impl Fn(&str) -> Option<String>) -> Result<Rank, RankError> {
    let sources: [(Launcher, &str, &[&str]); 4] = [
        (
            Launcher::OpenMpi,
            "OMPI_COMM_WORLD_RANK",
            &["OMPI_COMM_WORLD_SIZE"],
        ),
        (Launcher::Hydra, "PMI_RANK", &["PMI_SIZE"]),
        (
            Launcher::Pmix,
            "PMIX_RANK",
            &[
                "PMIX_SIZE",
                "OMPI_COMM_WORLD_SIZE",
                "SLURM_STEP_NUM_TASKS",
                "SLURM_NTASKS",
            ],
        ),
        (
            Launcher::Slurm,
            "SLURM_PROCID",
            &["SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"],
        ),
    ];
    for (launcher, rank_var, size_vars) in sources {
        let Some(rank) = var(rank_var) else {
            continue;
        };
        let (size_var, size) = size_vars
            .iter()
            .find_map(|v| var(v).map(|s| (*v, s)))
            .ok_or(RankError::NoSize {
                rank: rank_var,
                sizes: size_vars,
            })?;
        let size = number(size_var, &size, 1, MAX_SIZE)?;
        let rank = number(rank_var, &rank, 0, size - 1)?;
        return Ok(Rank {
            rank,
            size,
            launcher,
        });
    }
    Err(RankError::NoLauncher)
}

/// Where rank 0 runs: under Slurm the first node of the step's (else the job's) node list, which
/// holds rank 0 with Slurm's block and cyclic distributions (not with `-m arbitrary` or
/// `--relative`); under Open MPI loopback when every process is on this node; else unknown.
pub fn rank0(r: &Rank, var: impl Fn(&str) -> Option<String>) -> Result<Option<Rank0>, RankError> {
    if r.launcher == Launcher::Slurm {
        for list_var in [
            "SLURM_STEP_NODELIST",
            "SLURM_JOB_NODELIST",
            "SLURM_NODELIST",
        ] {
            if let Some(list) = var(list_var) {
                return hostlist::first(&list)
                    .map(|h| Some(Rank0::Host(h)))
                    .map_err(|error| RankError::NodeList {
                        name: list_var,
                        error,
                    });
            }
        }
    }
    let local = var("OMPI_COMM_WORLD_LOCAL_SIZE")
        .map(|s| number("OMPI_COMM_WORLD_LOCAL_SIZE", &s, 1, MAX_SIZE))
        .transpose()?;
    Ok((r.launcher == Launcher::OpenMpi && local == Some(r.size)).then_some(Rank0::Loopback))
}

/// The launch's id, the same in every process of one launch and different in another: Open MPI's
/// or PMIx's job (namespace), else Slurm's job and step, else Hydra's `PMI_JOBID`; empty when
/// the launcher gives none.
pub fn launch_id(var: impl Fn(&str) -> Option<String>) -> String {
    let slurm = || {
        let job = var("SLURM_JOB_ID")?;
        Some(format!(
            "{job}.{}",
            var("SLURM_STEP_ID").unwrap_or_default()
        ))
    };
    var("PMIX_NAMESPACE")
        .or_else(|| var("OMPI_MCA_ess_base_jobid"))
        .or_else(slurm)
        .or_else(|| var("PMI_JOBID"))
        .unwrap_or_default()
}

/// Reads a count from `value` (the variable `name`'s), within `lo..=hi`.
fn number(name: &'static str, value: &str, lo: u32, hi: u32) -> Result<u32, RankError> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| RankError::BadNumber {
            name,
            value: value.into(),
            lo,
            hi,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn rank(pairs: &[(&str, &str)]) -> Result<Rank, String> {
        detect(env(pairs)).map_err(|e| e.to_string())
    }

    #[test]
    fn each_launcher_is_read() {
        let ompi = rank(&[("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "4")]);
        assert_eq!(
            ompi,
            Ok(Rank {
                rank: 2,
                size: 4,
                launcher: Launcher::OpenMpi
            })
        );
        let hydra = rank(&[("PMI_RANK", "0"), ("PMI_SIZE", "8")]).unwrap();
        assert_eq!(
            (hydra.rank, hydra.size, hydra.launcher),
            (0, 8, Launcher::Hydra)
        );
        let pmix = rank(&[("PMIX_RANK", "5"), ("SLURM_NTASKS", "6")]).unwrap();
        assert_eq!(
            (pmix.rank, pmix.size, pmix.launcher),
            (5, 6, Launcher::Pmix)
        );
        let slurm = rank(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_STEP_NUM_TASKS", "4"),
            ("SLURM_NTASKS", "33"),
        ])
        .unwrap();
        assert_eq!(
            (slurm.rank, slurm.size, slurm.launcher),
            (3, 4, Launcher::Slurm)
        );
    }

    /// mpirun inside a Slurm allocation: the processes inherit the allocation's SLURM_*, but
    /// Open MPI started them.
    #[test]
    fn the_direct_launcher_wins_over_the_allocation() {
        let r = rank(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "7"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
            ("PMIX_RANK", "7"),
        ])
        .unwrap();
        assert_eq!((r.rank, r.size, r.launcher), (7, 8, Launcher::OpenMpi));
    }

    #[test]
    fn nothing_found_names_every_variable() {
        let e = rank(&[("HOME", "/root")]).unwrap_err();
        for v in [
            "OMPI_COMM_WORLD_RANK",
            "PMI_RANK",
            "PMIX_RANK",
            "SLURM_PROCID",
            "PMI_SIZE",
        ] {
            assert!(e.contains(v), "{e}");
        }
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = rank(&[("PMI_RANK", "1")]).unwrap_err();
        assert!(
            e.contains("PMI_RANK is set") && e.contains("PMI_SIZE"),
            "{e}"
        );
        let e = rank(&[("PMI_RANK", "4"), ("PMI_SIZE", "4")]).unwrap_err();
        assert!(e.contains("PMI_RANK='4'") && e.contains("0 to 3"), "{e}");
        let e = rank(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "0")]).unwrap_err();
        assert!(e.contains("SLURM_NTASKS='0'"), "{e}");
        let e = rank(&[("PMI_RANK", "-1"), ("PMI_SIZE", "2")]).unwrap_err();
        assert!(e.contains("PMI_RANK='-1'"), "{e}");
        let e = rank(&[("PMI_RANK", "0"), ("PMI_SIZE", "4294967296")]).unwrap_err();
        assert!(e.contains("PMI_SIZE"), "{e}");
        let e = rank(&[("PMI_RANK", "0"), ("PMI_SIZE", "100001")]).unwrap_err();
        assert!(e.contains("1 to 100000"), "{e}");
    }

    #[test]
    fn launch_ids() {
        let id = |pairs: &[(&str, &str)]| launch_id(env(pairs));
        assert_eq!(
            id(&[("PMIX_NAMESPACE", "193"), ("SLURM_JOB_ID", "7")]),
            "193"
        );
        assert_eq!(id(&[("SLURM_JOB_ID", "7"), ("SLURM_STEP_ID", "0")]), "7.0");
        assert_eq!(id(&[("PMI_JOBID", "kvs_1")]), "kvs_1");
        assert_eq!(id(&[]), "");
    }

    #[test]
    fn rank0_from_the_slurm_node_list() {
        let vars = [
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "33"),
            ("SLURM_JOB_NODELIST", "big[001-999]"),
            ("SLURM_STEP_NODELIST", "node[07-39],login"),
        ];
        let r = rank(&vars).unwrap();
        assert_eq!(
            rank0(&r, env(&vars)),
            Ok(Some(Rank0::Host("node07".into())))
        );
        let job_only = [
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_JOB_NODELIST", "a,b"),
        ];
        let r = rank(&job_only).unwrap();
        assert_eq!(rank0(&r, env(&job_only)), Ok(Some(Rank0::Host("a".into()))));
        let bad = [
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_STEP_NODELIST", "n[1-"),
        ];
        let e = rank0(&rank(&bad).unwrap(), env(&bad))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("SLURM_STEP_NODELIST: "), "{e}");
    }

    #[test]
    fn rank0_under_open_mpi_only_when_all_are_local() {
        let one_node = [
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
        ];
        let r = rank(&one_node).unwrap();
        assert_eq!(rank0(&r, env(&one_node)), Ok(Some(Rank0::Loopback)));
        let spread = [
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ];
        assert_eq!(rank0(&rank(&spread).unwrap(), env(&spread)), Ok(None));
        let hydra = [("PMI_RANK", "1"), ("PMI_SIZE", "2")];
        assert_eq!(rank0(&rank(&hydra).unwrap(), env(&hydra)), Ok(None));
    }
}
