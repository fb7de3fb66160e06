//! Heartbeats: agents stop a test whose controller says nothing for 3 s, so the controller
//! heartbeats every agent while the test runs and while it sets up flows (thousands of
//! connections take longer than that). The heartbeat thread ends as soon as it is told to, so
//! that a short test does not wait out its sleep.

use super::control::{send, Sender};
use fathom_proto::ToAgent;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a heartbeat goes out.
const EVERY: Duration = Duration::from_millis(900);

/// Tells a heartbeat thread to end; it wakes at once.
#[derive(Default)]
pub(super) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stop {
    /// Ends the heartbeats.
    pub(super) fn set(&self) {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Waits until `deadline` or the stop, whichever comes first; true once stopped.
    fn wait_until(&self, deadline: Instant) -> bool {
        let mut stopped = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        while !*stopped {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            stopped = self
                .cv
                .wait_timeout(stopped, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }
}

/// Sends a heartbeat on every sender every [`EVERY`] until `stop` is set.
pub(super) fn beat(senders: &[Sender], stop: &Stop) {
    let mut next = Instant::now() + EVERY;
    while !stop.wait_until(next) {
        next += EVERY;
        for s in senders {
            let _ = send(s, &ToAgent::Heartbeat);
        }
    }
}

/// Runs `work` while heartbeating `senders` from another thread.
pub(super) fn during<T>(senders: &[Sender], work: impl FnOnce() -> T) -> T {
    let stop = Stop::default();
    std::thread::scope(|s| {
        s.spawn(|| beat(senders, &stop));
        let r = work();
        stop.set();
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread used to sleep in 50 ms steps, which a short test waited out twice.
    #[test]
    fn a_stopped_heartbeat_ends_at_once() {
        let stop = Stop::default();
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| beat(&[], &stop));
            stop.set();
        });
        assert!(t.elapsed() < EVERY);
        assert!(stop.wait_until(Instant::now() + Duration::from_secs(60)));
    }
}
