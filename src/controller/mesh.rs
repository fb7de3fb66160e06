//! A mesh's conversations with agents: book a slot of an agent's time, give it back, read a
//! mesh agent's results, or only see that it answers. Bookings and releases go over one
//! connection per agent kept open between them ([`Links`]): a mesh books several slots a
//! second, and a connection with its handshake each time costs an agent a thread and a key
//! check per booking. The agent closes a connection that stays silent for 3 s; the next
//! booking then opens a new one. Each waits at most [`MESH_CONNECT`] to connect and
//! [`MESH_STEP`] for each answer, so one hung agent holds a mesh's loop up for seconds.

use super::control::Control;
use super::{connect_within, ControlError, Target};
use fathom_proto::{BookSlot, ToAgent, ToController};
use std::collections::HashMap;
use std::time::Duration;

/// How long a mesh waits to connect to an agent.
pub const MESH_CONNECT: Duration = Duration::from_secs(1);
/// How long a mesh waits for each answer.
pub const MESH_STEP: Duration = Duration::from_secs(3);

/// Runs `ask` on a fresh, authenticated connection to `t` (its own key, else `key`), then
/// closes it.
fn once<T>(
    t: &Target,
    key: Option<&[u8]>,
    ask: impl FnOnce(&mut Control) -> Result<T, ControlError>,
) -> Result<T, ControlError> {
    let mut c = open(t, key)?;
    let answer = ask(&mut c);
    let _ = c.send(&ToAgent::Close);
    answer
}

/// An authenticated connection to `t` (its own key, else `key`).
fn open(t: &Target, key: Option<&[u8]>) -> Result<Control, ControlError> {
    connect_within(t, t.key.as_deref().or(key), MESH_CONNECT, MESH_STEP)
}

/// The mesh results of the agent `t` (JSON, not yet checked).
pub fn results(t: &Target, key: Option<&[u8]>) -> Result<String, ControlError> {
    once(t, key, Control::mesh_results)
}

/// Whether `t`'s agent answers and lets this controller in.
pub fn probe(t: &Target, key: Option<&[u8]>) -> Result<(), ControlError> {
    once(t, key, |_| Ok(()))
}

/// Connections to agents kept open for bookings and releases, by agent name.
#[derive(Default)]
pub struct Links {
    key: Option<Vec<u8>>,
    open: HashMap<String, Control>,
}

impl Links {
    /// No connection yet; agents without a key of their own are reached with `key`.
    pub fn new(key: Option<Vec<u8>>) -> Links {
        Links {
            key,
            open: HashMap::new(),
        }
    }

    /// Books `slot` on `t`: `Booked` or `Busy`.
    pub fn book(&mut self, t: &Target, slot: &BookSlot) -> Result<ToController, ControlError> {
        self.ask(t, |c| c.book(slot.clone()))
    }

    /// Gives back slot `id` on `t`: false when it no longer held it.
    pub fn release(&mut self, t: &Target, id: u64) -> Result<bool, ControlError> {
        self.ask(t, |c| c.release(id))
    }

    /// Closes every connection.
    pub fn close(&mut self) {
        for (_, c) in self.open.drain() {
            let _ = c.send(&ToAgent::Close);
        }
    }

    /// Runs `ask` on the connection to `t`, opening it (again) when there is none or the
    /// kept one failed (the agent closed it after a silence).
    fn ask<T>(
        &mut self,
        t: &Target,
        ask: impl Fn(&mut Control) -> Result<T, ControlError>,
    ) -> Result<T, ControlError> {
        if let Some(c) = self.open.get_mut(&t.name) {
            match ask(c) {
                Ok(answer) => return Ok(answer),
                Err(_) => drop(self.open.remove(&t.name)),
            }
        }
        let mut c = open(t, self.key.as_deref())?;
        let answer = ask(&mut c)?;
        self.open.insert(t.name.clone(), c);
        Ok(answer)
    }
}
