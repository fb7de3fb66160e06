//! Heartbeats: agents stop a test whose controller says nothing for 3 s, so the controller
//! heartbeats every agent while the test runs and while it sets up flows (thousands of
//! connections take longer than that).

use super::control::{send, Sender};
use fathom_proto::ToAgent;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a heartbeat goes out.
const EVERY: Duration = Duration::from_millis(900);

/// Sends a heartbeat on every sender every [`EVERY`] until `stop` is set.
pub(super) fn beat(senders: &[Sender], stop: &AtomicBool) {
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if last.elapsed() >= EVERY {
            last = Instant::now();
            for s in senders {
                let _ = send(s, &ToAgent::Heartbeat);
            }
        }
    }
}

/// Runs `work` while heartbeating `senders` from another thread.
pub(super) fn during<T>(senders: &[Sender], work: impl FnOnce() -> T) -> T {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| beat(senders, &stop));
        let r = work();
        stop.store(true, Ordering::Relaxed);
        r
    })
}
