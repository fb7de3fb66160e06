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
//!
//! Spinning is rationed ([`SpinBudget`]): at most 1 in [`SPIN_SHARE`] of the thread's time. On a
//! saturated link the next departure is always near, and a thread that spun through all of it
//! would use a whole CPU at real-time priority; the kernel then stops it for 50 ms every second
//! (`sched_rt_runtime_us`: real-time threads get 950 ms of each second), and the frames due in
//! those 50 ms leave late in one burst. Out of budget, the thread sleeps until the departure
//! itself: frames leave a wake-up latency late, and since departure times are fixed when frames
//! arrive, that lateness never accumulates and the link's rate holds.

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
/// The share of its time the thread may spend spinning (1 in `SPIN_SHARE`).
const SPIN_SHARE: u64 = 4;
/// The most spinning time the thread saves up while it sleeps.
const MAX_SPIN_CREDIT_NS: u64 = 2_000_000;
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
    let mut budget = SpinBudget::default();
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
            wait(lane, &mut latency, &mut budget)?;
        }
    }
    Ok(())
}

/// Sleeps until a frame arrives or shortly before the next departure; spins if that is near and
/// the budget allows, else sleeps until the departure itself.
fn wait(lane: &Lane, latency: &mut WakeLatency, budget: &mut SpinBudget) -> io::Result<()> {
    let now = clock::now_ns();
    let until_departure = lane
        .next_departure()
        .unwrap_or(u64::MAX)
        .saturating_sub(now);
    if until_departure == 0 {
        budget.sleep(now);
        return Ok(());
    }
    let early = SPIN_NS + latency.estimate;
    let timeout = match until_departure <= early {
        true if budget.spin(now) => {
            std::hint::spin_loop();
            return Ok(());
        }
        true => until_departure,
        false => (until_departure - early).min(IDLE_NS),
    };
    budget.sleep(now);
    if !lane.wait_readable(timeout)? {
        latency.record(clock::now_ns().saturating_sub(now + timeout));
    }
    Ok(())
}

/// Spinning time the thread may still use: it earns 1 / [`SPIN_SHARE`] of all time that passes
/// (up to [`MAX_SPIN_CREDIT_NS`]) and pays for the time between a decision to spin and the next,
/// going into debt if that was long.
#[derive(Default)]
struct SpinBudget {
    credit: i64,
    /// When the last decision was taken, and whether it was to spin.
    at: u64,
    spinning: bool,
}

impl SpinBudget {
    /// Settles the time since the last decision at `now`.
    fn settle(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.at).min(i64::MAX as u64 / 2) as i64;
        self.credit = (self.credit + elapsed / SPIN_SHARE as i64).min(MAX_SPIN_CREDIT_NS as i64);
        if self.spinning {
            self.credit -= elapsed;
        }
        self.at = now;
    }

    /// Whether the thread may spin from `now` on (it then pays until its next decision).
    fn spin(&mut self, now: u64) -> bool {
        self.settle(now);
        self.spinning = self.credit > 0;
        self.spinning
    }

    /// The thread sleeps or works from `now` on, earning credit.
    fn sleep(&mut self, now: u64) {
        self.settle(now);
        self.spinning = false;
    }
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

    #[test]
    fn spinning_is_held_to_its_share_of_the_time() {
        let mut budget = SpinBudget::default();
        budget.sleep(0);
        // A thread that would spin all the time after a long sleep: it spends the saved credit
        // (capped), then spins a quarter of the time.
        let (mut spun, mut t) = (0, 1_000_000_000);
        while t < 1_100_000_000 {
            if budget.spin(t) {
                spun += 1_000;
            }
            t += 1_000;
        }
        let share = (spun - MAX_SPIN_CREDIT_NS) as f64 / 100_000_000.0;
        assert!((share - 1.0 / SPIN_SHARE as f64).abs() < 0.01, "{share}");
        // One long spin (the thread was preempted while spinning) is paid back before the next.
        budget.sleep(t);
        assert!(budget.spin(t + 1_000_000_000));
        assert!(!budget.spin(t + 2_000_000_000));
        assert!(!budget.spin(t + 2_000_000_001));
    }
}
