//! The scheduler on a virtual clock: a mesh of any size run in this process for a simulated
//! span, with every member's slot table here, each test taking most of its slot, some holders
//! vanishing without a word (their slots freed at the deadline), and members down for a
//! while. It checks the classes' rule from what ran (no member ever in an exclusive test
//! beside another exclusive or normal one) and measures what the issue asks: exclusive tests
//! per member and hour, the share of pairs covered, the spread of start times, the skips.

mod ends;
mod measure;
mod setting;

pub use measure::{Outcome, TestOutcome};
pub use setting::Setting;

use crate::dispatch::{turn, Started};
use crate::health::Health;
use crate::schedule::Scheduler;
use ends::SimEnds;
use measure::Tally;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens to a started test: it begins (at its agreed start) or ends. Ends sort first
/// at one instant, so a test ending as another begins does not overlap it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    End,
    Begin,
}

/// Runs the simulation.
pub fn run(set: &Setting) -> Outcome {
    let names: Vec<String> = (0..set.members).map(|i| format!("m{i:04}")).collect();
    let mut sched = Scheduler::new(set.seed, set.peers, set.tests.clone(), &names, None, 0);
    let mut health = Health::new();
    let mut ends = SimEnds::new(&names, &set.outages);
    let mut tally = Tally::new(set, &names);
    let mut events: BinaryHeap<Reverse<(u64, Event, usize)>> = BinaryHeap::new();
    let mut running: Vec<Option<(Started, bool)>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut started = 0u64;
    let mut now = 0u64;
    while now < set.span_ns {
        while let Some(Reverse((at, event, slot))) =
            events.peek().copied().filter(|e| e.0 .0 <= now)
        {
            events.pop();
            let Some((s, vanished)) = running[slot].as_ref() else {
                continue;
            };
            match event {
                Event::Begin => {
                    tally.started(&s.due, at);
                    let length = (s.due.hold_ns as f64 * set.busy_share) as u64;
                    events.push(Reverse((at + length.max(1), Event::End, slot)));
                }
                Event::End => {
                    tally.ended(&s.due, at);
                    if !vanished {
                        ends.release_both(s);
                    }
                    running[slot] = None;
                    free.push(slot);
                }
            }
        }
        ends.now = now;
        let (begun, _) = turn(&mut sched, &mut health, &mut ends, now);
        for s in begun {
            started += 1;
            let vanished = set.vanish_every.is_some_and(|n| started.is_multiple_of(n));
            let slot = free.pop().unwrap_or_else(|| {
                running.push(None);
                running.len() - 1
            });
            events.push(Reverse((s.start_ns, Event::Begin, slot)));
            running[slot] = Some((s, vanished));
        }
        let next = [
            sched.next_wake(),
            events.peek().map(|e| e.0 .0),
            health.next_probe(),
        ];
        now = next
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(set.span_ns)
            .max(now + 1);
    }
    tally.finish(&sched, ends.probes, set)
}

#[cfg(test)]
mod tests;
