//! A one-way gate: workers pass it once the sampler has taken its first snapshot. Unlike a
//! barrier, opening it wakes only workers already waiting, and a worker that comes later passes
//! without waking anyone, so dozens of hosts starting at one instant do not also wake their
//! samplers.

use std::sync::{Condvar, Mutex};

/// Closed until [`open`](Gate::open).
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    /// Lets every waiting and future caller of [`pass`](Gate::pass) through.
    pub fn open(&self) {
        *self.open.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Returns once the gate is open.
    pub fn pass(&self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        while !*open {
            open = self.cv.wait(open).unwrap_or_else(|p| p.into_inner());
        }
    }
}
