//! The server's one test slot, which the listener and the running session share: idle, busy,
//! or collecting the streams of the test that holds it.

use super::wire;
use std::net::TcpStream;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Mutex, MutexGuard};

/// What the one test slot holds.
pub enum Slot {
    /// No test: the next cookie starts one.
    Idle,
    /// A test runs; new connections are refused with ACCESS_DENIED.
    Busy,
    /// A test waits for its streams: connections with its cookie join it.
    Collecting([u8; wire::COOKIE_LEN], SyncSender<(u64, TcpStream)>),
}

/// Sets the slot to collect `n` streams with `cookie`; returns where they arrive, each with its
/// place in the accept queue.
pub fn collect(
    slot: &Mutex<Slot>,
    cookie: [u8; wire::COOKIE_LEN],
    n: usize,
) -> Receiver<(u64, TcpStream)> {
    let (tx, rx) = sync_channel(n);
    *lock(slot) = Slot::Collecting(cookie, tx);
    rx
}

/// Sets the slot back to busy once the streams are in.
pub fn hold(slot: &Mutex<Slot>) {
    *lock(slot) = Slot::Busy;
}

/// Frees the slot when a test ends, however it ends.
pub struct Free<'a>(pub &'a Mutex<Slot>);

impl Drop for Free<'_> {
    fn drop(&mut self) {
        *lock(self.0) = Slot::Idle;
    }
}

/// The slot, whatever a panicking holder left in it.
pub fn lock(m: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
