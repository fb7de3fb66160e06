//! fathom on clusters: the pieces that let a controller find its agents where a cluster engine
//! (Slurm, Open MPI, Kubernetes, DNS) placed them, instead of a person typing host names.
//!
//! [`hostlist`] reads and expands host lists as Slurm and Open MPI hostfiles write them
//! (`node[01-64]`, `rack[1-2]-n[1-4]`); [`discover`] finds the agents (`--agents-from`);
//! [`rank`] reads a process's rank from its launcher's environment, and [`rendezvous`] is how
//! the processes of `fathom launch` find rank 0.
#![forbid(unsafe_code)]

pub mod discover;
pub mod hostlist;
pub mod rank;
pub mod rendezvous;
