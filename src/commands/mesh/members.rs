//! Where the members' agents are: each listed member resolved once (a lab host in its
//! namespace, else HOST[:PORT]), or the members a discovery source lists, looked at again
//! every `refresh`. A member that does not resolve is kept, unreachable, so that it is marked
//! down and probed like any member whose agent does not answer.

use crate::controller::Target;
use crate::Failure;
use fathom_cluster::discover::Source;
use fathom_mesh::spec::{Members, Mesh};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long one look at a discovery source may take.
const LOOK: Duration = Duration::from_secs(5);

/// The members and their agents.
#[derive(Clone, Debug, Default)]
pub struct Roster {
    members: BTreeMap<String, Result<Target, String>>,
}

impl Roster {
    /// The members of `mesh` as they are now.
    pub fn of(mesh: &Mesh) -> Result<Roster, Failure> {
        match &mesh.members {
            Members::Listed(list) => {
                let lab = match &mesh.lab {
                    Some(n) => Some(
                        fathom_lab::Lab::load(n)
                            .map_err(|e| Failure::Usage(format!("[members] lab {n}: {e}")))?,
                    ),
                    None => None,
                };
                let members = list
                    .iter()
                    .map(|m| {
                        let t = Target::lab_or_resolve(&m.addr, lab.as_ref(), None)
                            .map(|t| Target {
                                name: m.name.clone(),
                                ..t
                            })
                            .map_err(|e| e.to_string());
                        (m.name.clone(), t)
                    })
                    .collect();
                Ok(Roster { members })
            }
            Members::Found { source, .. } => Roster::found(source),
        }
    }

    /// The members `source` lists now, by name.
    fn found(source: &Source) -> Result<Roster, Failure> {
        let found = source
            .list(LOOK)
            .map_err(|e| Failure::Runtime(format!("[members] from: {e}")))?;
        let members = found
            .ready
            .into_iter()
            .map(|a| {
                let t = Target::resolve(&a.addr, None)
                    .map(|t| Target {
                        name: a.name.clone(),
                        ..t
                    })
                    .map_err(|e| e.to_string());
                (a.name, t)
            })
            .collect();
        Ok(Roster { members })
    }

    /// The members' names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.members.keys().cloned().collect()
    }

    /// `name`'s agent, or why it has none.
    pub fn target(&self, name: &str) -> Result<&Target, String> {
        match self.members.get(name) {
            Some(Ok(t)) => Ok(t),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("{name} is not a member any more")),
        }
    }
}
