//! What an agent keeps for meshes: its slot table (`Book`/`Release` from any authenticated
//! controller, so a stranger cannot book a keyed agent's time) and, under `fathom serve
//! --mesh`, the results of the tests it runs (`MeshResults`). Times in the table are this
//! host's monotonic clock; the wire carries them as spans from now.

use fathom_engine::clock;
use fathom_mesh::slots::{Booking, Slot, SlotTable};
use fathom_proto::{BookSlot, ToController, SETTINGS_MAX};
use std::sync::{Mutex, OnceLock};

/// Makes the mesh results document (JSON) when a controller asks for it.
pub type Results = Box<dyn Fn() -> String + Send + Sync>;

/// An agent's mesh state, shared by its sessions.
#[derive(Default)]
pub struct MeshShare {
    slots: Mutex<SlotTable>,
    results: OnceLock<Results>,
}

impl std::fmt::Debug for MeshShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshShare")
            .field("runs_a_mesh", &self.results.get().is_some())
            .finish()
    }
}

impl MeshShare {
    /// Books `b` from now (this host's clock); the answer the wire carries (this process's own
    /// mesh books its end here with the same answer).
    pub fn book(&self, b: &BookSlot) -> ToController {
        let now = clock::now_ns();
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let start = now.saturating_add(b.start_in_ns);
        match slots.book(b.class, now, start, b.hold_ns, &b.holder) {
            Booking::Booked(id) => ToController::Booked { id },
            Booking::Busy { until_ns } => ToController::Busy {
                free_in_ns: Some(until_ns.saturating_sub(now)),
            },
            Booking::Full => ToController::Busy { free_in_ns: None },
        }
    }

    /// Gives back slot `id`.
    pub fn release(&self, id: u64) -> ToController {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        ToController::Released {
            held: slots.release(id),
        }
    }

    /// The slots held now (for this process's own mesh and for tests).
    pub fn held(&self) -> Vec<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.held(clock::now_ns()).to_vec()
    }

    /// Serves `results` as this agent's mesh results from now on (once).
    pub fn serve_results(&self, results: Results) {
        let _ = self.results.set(results);
    }

    /// The answer to `MeshResults`: the document, or why there is none.
    pub fn results(&self) -> ToController {
        match self.results.get().map(|r| r()) {
            Some(json) if json.len() <= SETTINGS_MAX => ToController::MeshResults(json),
            Some(json) => ToController::Error {
                message: format!(
                    "this agent's mesh results are {} bytes, more than the protocol carries",
                    json.len()
                ),
            },
            None => ToController::Error {
                message: "this agent runs no mesh (start it with `fathom serve --mesh FILE`)"
                    .into(),
            },
        }
    }
}
