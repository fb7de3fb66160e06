//! One turn of a mesh's loop, the same in a real mesh and in the simulation: members down are
//! probed when their back-off says, and each instance due agrees a start with both its ends,
//! as pScheduler's lead does: the source is asked for a slot from now, and each refusal names
//! the earliest time that end would give, which the other end is asked for next, until both
//! give the same start (a few rounds at most, and never past the instance's slip). How a slot
//! is booked (an agent over the control protocol, a table in this process) is the [`Ends`]'.

use crate::health::Health;
use crate::schedule::{Due, Scheduler, Verdict};
use crate::slots::Booking;

/// Most rounds of asking both ends before the instance waits for a later turn.
const ROUNDS: usize = 4;

/// A member could not be reached: why, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreachable(pub String);

/// Where the members' slots are booked.
pub trait Ends {
    /// Books `due`'s slot (its class, for its hold) on `member`, one of its two ends, from
    /// `start_ns` (now or later). A [`Booking::Busy`] start is in the scheduler's clock.
    fn book(&mut self, member: &str, due: &Due, start_ns: u64) -> Result<Booking, Unreachable>;
    /// Gives back slot `id` on `member` (best effort: its deadline frees it anyway).
    fn release(&mut self, member: &str, id: u64);
    /// Whether `member`'s agent answers now.
    fn probe(&mut self, member: &str) -> Result<(), Unreachable>;
}

/// An instance that got its slots: run it from `start_ns`, then give both back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    /// What to run.
    pub due: Due,
    /// When both ends expect it (now or a little later), in the scheduler's clock.
    pub start_ns: u64,
    /// The source's slot id.
    pub source_slot: u64,
    /// The target's slot id.
    pub target_slot: u64,
}

/// What a turn saw happen, besides the tests that start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Members marked down in this turn, with why.
    pub down: Vec<(String, String)>,
    /// Members that answered a probe in this turn.
    pub up: Vec<String>,
    /// Instances skipped in this turn: no slot within their slip.
    pub skipped: Vec<Due>,
    /// Instances not tried in this turn: a member was down.
    pub not_tried: Vec<Due>,
}

/// Probes the members down whose probe is due, then books the instances due at `now`; returns
/// those that start, and the members that went down or came back.
pub fn turn(
    s: &mut Scheduler,
    health: &mut Health,
    ends: &mut dyn Ends,
    now: u64,
) -> (Vec<Started>, Changes) {
    let mut changes = Changes::default();
    for m in health.probes_due(now) {
        match ends.probe(&m) {
            Ok(()) => {
                health.up(&m);
                changes.up.push(m);
            }
            Err(Unreachable(why)) => {
                health.failed(&m, now, &why);
            }
        }
    }
    let mut out = Vec::new();
    for due in s.poll(now) {
        if health.is_down(&due.source) || health.is_down(&due.target) {
            s.down(&due);
            changes.not_tried.push(due);
            continue;
        }
        let mut asking = Asking {
            ends: &mut *ends,
            health: &mut *health,
            changes: &mut changes,
            now,
        };
        match asking.agree(&due) {
            Deal::Agreed(start_ns, source_slot, target_slot) => {
                s.started(&due, start_ns);
                out.push(Started {
                    due,
                    start_ns,
                    source_slot,
                    target_slot,
                });
            }
            Deal::Later(until) => {
                if s.busy(&due, until, now) == Verdict::Skipped {
                    asking.changes.skipped.push(due);
                }
            }
            Deal::Down => {
                s.down(&due);
                asking.changes.not_tried.push(due);
            }
        }
    }
    (out, changes)
}

/// How asking both ends ended.
enum Deal {
    /// Both gave slots from this start: (start, source slot, target slot).
    Agreed(u64, u64, u64),
    /// No agreement this turn; both might be free from this instant, if known.
    Later(Option<u64>),
    /// An end could not be reached (now marked down).
    Down,
}

/// One instance's asking of its two ends.
struct Asking<'a> {
    ends: &'a mut dyn Ends,
    health: &'a mut Health,
    changes: &'a mut Changes,
    now: u64,
}

impl Asking<'_> {
    /// Asks the source, then the target, for the same start, moving it to each refusal's
    /// earliest free time, for [`ROUNDS`] rounds at most and never past `due.latest_ns`.
    fn agree(&mut self, due: &Due) -> Deal {
        let mut at = self.now;
        for _ in 0..ROUNDS {
            if at > due.latest_ns {
                return Deal::Later(Some(at));
            }
            let source = match self.book(&due.source, due, at) {
                Ok(Booking::Booked(id)) => id,
                Ok(Booking::Busy { until_ns }) => {
                    at = until_ns.max(at + 1);
                    continue;
                }
                Ok(Booking::Full) => return Deal::Later(None),
                Err(()) => return Deal::Down,
            };
            let target = self.book(&due.target, due, at);
            if !matches!(target, Ok(Booking::Booked(_))) {
                self.ends.release(&due.source, source);
            }
            match target {
                Ok(Booking::Booked(id)) => return Deal::Agreed(at, source, id),
                Ok(Booking::Busy { until_ns }) => at = until_ns.max(at + 1),
                Ok(Booking::Full) => return Deal::Later(None),
                Err(()) => return Deal::Down,
            }
        }
        Deal::Later(Some(at))
    }

    /// Books on `member`; an unreachable member is marked down.
    fn book(&mut self, member: &str, due: &Due, at: u64) -> Result<Booking, ()> {
        self.ends.book(member, due, at).map_err(|Unreachable(why)| {
            self.health.failed(member, self.now, &why);
            self.changes.down.push((member.to_string(), why));
        })
    }
}
