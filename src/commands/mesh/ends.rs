//! The members' slots as a real mesh books them: over the control protocol on each member's
//! agent (keyed), or, for the agent this process is (`serve --mesh`), in its own table. The
//! scheduler's clock is Unix time in ns, so that independent agents agree on phases and
//! rotation rounds; an agent's answers are spans from now, turned into that clock here.

use super::members::Roster;
use crate::agent::MeshShare;
use crate::controller::mesh::{self, Links};
use crate::controller::Target;
use fathom_mesh::dispatch::{Ends, Unreachable};
use fathom_mesh::schedule::Due;
use fathom_mesh::slots::Booking;
use fathom_proto::{BookSlot, ToController};
use std::sync::Arc;

/// Now, Unix time in ns: the scheduler's clock.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// One end of a test, as the thread running it holds it.
#[derive(Clone, Debug)]
pub enum End {
    /// This process's own agent.
    Local(Arc<MeshShare>),
    /// A member's agent, with the key to reach it.
    Remote(Target, Option<Vec<u8>>),
}

/// The members' agents, for the scheduler.
pub struct NetEnds {
    /// The members now.
    pub roster: Roster,
    /// The key for agents that have none of their own (lab hosts have their lab's).
    pub key: Option<Vec<u8>>,
    /// This process's own agent and its member name, under `serve --mesh`.
    pub local: Option<(String, Arc<MeshShare>)>,
    /// The tests' names, for the slots' holder descriptions.
    pub tests: Vec<String>,
    /// The connections bookings and releases go over.
    pub links: Links,
}

impl NetEnds {
    /// `member`'s end, or why it cannot be reached.
    pub fn end(&self, member: &str) -> Result<End, String> {
        match &self.local {
            Some((name, share)) if name == member => Ok(End::Local(share.clone())),
            _ => Ok(End::Remote(
                self.roster.target(member)?.clone(),
                self.key.clone(),
            )),
        }
    }
}

impl Ends for NetEnds {
    fn book(&mut self, member: &str, due: &Due, start_ns: u64) -> Result<Booking, Unreachable> {
        let test = self.tests.get(due.test).map_or("", String::as_str);
        let slot = BookSlot {
            class: due.class,
            start_in_ns: start_ns.saturating_sub(unix_ns()),
            hold_ns: due.hold_ns,
            holder: format!("mesh {test} {} -> {}", due.source, due.target),
        };
        let answer = match self.end(member).map_err(Unreachable)? {
            End::Local(share) => share.book(&slot),
            End::Remote(t, _) => self
                .links
                .book(&t, &slot)
                .map_err(|e| Unreachable(e.to_string()))?,
        };
        match answer {
            ToController::Booked { id } => Ok(Booking::Booked(id)),
            ToController::Busy {
                free_in_ns: Some(free_in),
            } => Ok(Booking::Busy {
                until_ns: unix_ns().saturating_add(free_in),
            }),
            ToController::Busy { free_in_ns: None } => Ok(Booking::Full),
            other => Err(Unreachable(format!("answered {other:?} to a booking"))),
        }
    }

    fn release(&mut self, member: &str, id: u64) {
        match self.end(member) {
            Ok(End::Local(share)) => drop(share.release(id)),
            Ok(End::Remote(t, _)) => drop(self.links.release(&t, id)),
            Err(_) => {}
        }
    }

    fn probe(&mut self, member: &str) -> Result<(), Unreachable> {
        match self.end(member).map_err(Unreachable)? {
            End::Local(_) => Ok(()),
            End::Remote(t, key) => {
                mesh::probe(&t, key.as_deref()).map_err(|e| Unreachable(e.to_string()))
            }
        }
    }
}
