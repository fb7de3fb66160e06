//! A forwarding thread: it serves one [`Lane`] (read the ring, send what is due) and sleeps when
//! the ring is empty until a frame arrives or the next held frame is due.
//!
//! The thread asks for real-time scheduling (`SCHED_FIFO`, lowest priority) when allowed: on a
//! small machine the receiving application, woken by the frames we deliver, would otherwise
//! preempt us after every batch, and other load would delay frames past their departure time.
//! Sleeping is `ppoll` with a 1 ns timer slack until shortly before the next departure, then a
//! busy loop (which keeps reading), so frames leave within a few microseconds of their time. How
//! early to stop sleeping is learnt: timed waits on a virtual machine wake 50–100 µs late, so the
//! thread tracks how late its waits have woken recently ([`WakeLatency`]) and sleeps that much
//! less, plus [`SPIN_NS`].

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use crate::clock;
use crate::lane::{Lane, READ_BUDGET};

/// How long before a departure, beyond the expected wake-up latency, the thread stops sleeping.
const SPIN_NS: u64 = 20_000;
/// The most wake-up latency the thread plans for (more is taken as a one-off).
const MAX_LATENCY_NS: u64 = 500_000;
/// Longest sleep, so a stop request, new parameters and counters are seen promptly.
const IDLE_NS: u64 = 20_000_000;
/// How often a busy thread publishes its counters.
const PUBLISH_NS: u64 = 1_000_000;

/// Serves `lane` until `stop` is set; returns the first error, if any.
pub fn run(mut lane: Lane, stop: Arc<AtomicBool>) -> io::Result<()> {
    clock::tighten_timer_slack();
    raise_priority();
    let result = forward(&mut lane, &stop);
    lane.publish().and(result)
}

fn forward(lane: &mut Lane, stop: &AtomicBool) -> io::Result<()> {
    let mut published_at = 0;
    let mut latency = WakeLatency::default();
    while !stop.load(Relaxed) {
        lane.apply_params();
        let read = lane.receive();
        let now = clock::now_ns();
        lane.transmit(now);
        if now - published_at > PUBLISH_NS {
            lane.publish()?;
            published_at = now;
        }
        if read < READ_BUDGET {
            wait(lane, &mut latency)?;
        }
    }
    Ok(())
}

/// Sleeps until a frame arrives or shortly before the next departure; spins if that is near.
fn wait(lane: &Lane, latency: &mut WakeLatency) -> io::Result<()> {
    let now = clock::now_ns();
    let until_departure = lane
        .next_departure()
        .unwrap_or(u64::MAX)
        .saturating_sub(now);
    let early = SPIN_NS + latency.estimate;
    if until_departure <= early {
        std::hint::spin_loop();
        return Ok(());
    }
    let timeout = (until_departure - early).min(IDLE_NS);
    if !lane.wait_readable(timeout)? {
        latency.record(clock::now_ns().saturating_sub(now + timeout));
    }
    Ok(())
}

/// How late this thread's timed waits wake: a maximum that decays by 1/16 per wait, so a burst of
/// late wake-ups is remembered for a while and a quiet spell lets it fall.
#[derive(Default)]
struct WakeLatency {
    estimate: u64,
}

impl WakeLatency {
    fn record(&mut self, late_ns: u64) {
        self.estimate = late_ns
            .min(MAX_LATENCY_NS)
            .max(self.estimate - self.estimate / 16);
    }
}

/// Moves the calling thread to `SCHED_FIFO` priority 1 if permitted (root or CAP_SYS_NICE);
/// otherwise it stays where it is.
fn raise_priority() {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param. Failure changes nothing.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_latency_jumps_up_and_decays() {
        let mut latency = WakeLatency::default();
        latency.record(80_000);
        assert_eq!(latency.estimate, 80_000);
        latency.record(10_000);
        assert_eq!(latency.estimate, 75_000);
        latency.record(5_000_000);
        assert_eq!(latency.estimate, MAX_LATENCY_NS);
        (0..200).for_each(|_| latency.record(0));
        assert!(latency.estimate < 1_000);
    }
}
