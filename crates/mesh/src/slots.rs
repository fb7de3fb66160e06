//! One member's slot table: the mesh tests it takes part in, each an interval of its time with
//! its class and a deadline. A slot may start now or later (a reservation, as pScheduler's
//! lead books the earliest time every participant is free): it is given only when no slot
//! that overlaps it conflicts with its class (see [`Class::conflicts`]), and a refusal says
//! the earliest start that would be given. So an exclusive test waiting for normal ones to end
//! reserves its time, and normal tests asked for later keep out of it instead of starving it.
//! A slot whose holder never says it finished is freed at its deadline, so a vanished
//! controller cannot keep a member busy. The table is bounded: a full table refuses, it never
//! queues. Times are the owner's monotonic clock, in ns.

use crate::class::Class;
use serde::{Deserialize, Serialize};

/// Most slots one member holds at once.
pub const MAX_SLOTS: usize = 256;
/// Longest a slot may be held, and furthest ahead it may start (a day); longer asks are cut.
pub const MAX_HOLD_NS: u64 = 86_400_000_000_000;
/// Longest holder description kept, bytes.
pub const MAX_HOLDER: usize = 200;

/// A slot held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// Its id, for release.
    pub id: u64,
    /// The class of the test holding it.
    pub class: Class,
    /// When it starts.
    pub from_ns: u64,
    /// When it is freed whatever happens (its deadline).
    pub until_ns: u64,
    /// Who holds it (the mesh, the test and the pair, for logs).
    pub holder: String,
}

/// The answer to a booking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Booking {
    /// Given: the slot's id.
    Booked(u64),
    /// A conflicting slot overlaps; the earliest start that would be given is `until_ns`.
    Busy {
        /// The earliest start free of conflicts, for the same class and hold.
        until_ns: u64,
    },
    /// The table holds [`MAX_SLOTS`] already.
    Full,
}

/// One member's slots.
#[derive(Clone, Debug, Default)]
pub struct SlotTable {
    slots: Vec<Slot>,
    next_id: u64,
}

impl SlotTable {
    /// An empty table.
    pub fn new() -> SlotTable {
        SlotTable::default()
    }

    /// Books a slot of `class` from `from_ns` (now, `now_ns`, or later) for `hold_ns`, for
    /// `holder`, if no slot overlapping it conflicts.
    pub fn book(
        &mut self,
        class: Class,
        now_ns: u64,
        from_ns: u64,
        hold_ns: u64,
        holder: &str,
    ) -> Booking {
        self.expire(now_ns);
        let from = from_ns.clamp(now_ns, now_ns.saturating_add(MAX_HOLD_NS));
        let hold = hold_ns.clamp(1, MAX_HOLD_NS);
        let free = self.earliest(class, from, hold);
        if free > from {
            return Booking::Busy { until_ns: free };
        }
        if self.slots.len() >= MAX_SLOTS {
            return Booking::Full;
        }
        self.next_id += 1;
        self.slots.push(Slot {
            id: self.next_id,
            class,
            from_ns: from,
            until_ns: from.saturating_add(hold),
            holder: clipped(holder, MAX_HOLDER),
        });
        Booking::Booked(self.next_id)
    }

    /// The earliest start at or after `from` at which a slot of `class` lasting `hold` overlaps
    /// no conflicting slot. Each pass moves the start past the latest end of the conflicting
    /// slots overlapping it (no start before that end can miss the slot that has it), so it
    /// ends within as many passes as slots, without allocating.
    fn earliest(&self, class: Class, from: u64, hold: u64) -> u64 {
        let mut at = from;
        loop {
            let end = at.saturating_add(hold);
            let blocked = self
                .slots
                .iter()
                .filter(|s| s.class.conflicts(class) && s.from_ns < end && s.until_ns > at)
                .map(|s| s.until_ns)
                .max();
            match blocked {
                Some(until) => at = until,
                None => return at,
            }
        }
    }

    /// Frees slot `id`; false when it is not held (released already, or expired).
    pub fn release(&mut self, id: u64) -> bool {
        let before = self.slots.len();
        self.slots.retain(|s| s.id != id);
        self.slots.len() < before
    }

    /// Frees every slot whose deadline has come.
    pub fn expire(&mut self, now_ns: u64) {
        self.slots.retain(|s| s.until_ns > now_ns);
    }

    /// The slots held or reserved at `now_ns`.
    pub fn held(&mut self, now_ns: u64) -> &[Slot] {
        self.expire(now_ns);
        &self.slots
    }
}

/// `s` cut to at most `max` bytes at a character boundary.
fn clipped(s: &str, max: usize) -> String {
    let end = (0..=max.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Class::*;

    fn now(t: &mut SlotTable, class: Class, at: u64, hold: u64) -> Booking {
        t.book(class, at, at, hold, "test")
    }

    #[test]
    fn exclusive_waits_for_everyone_but_background() {
        let mut t = SlotTable::new();
        assert!(matches!(now(&mut t, Normal, 0, 100), Booking::Booked(_)));
        assert!(matches!(now(&mut t, Normal, 10, 100), Booking::Booked(_)));
        assert_eq!(
            now(&mut t, Exclusive, 20, 50),
            Booking::Busy { until_ns: 110 }
        );
        assert!(matches!(
            now(&mut t, Background, 20, 50),
            Booking::Booked(_)
        ));
        assert!(matches!(
            now(&mut t, Exclusive, 110, 50),
            Booking::Booked(_)
        ));
        assert_eq!(now(&mut t, Normal, 120, 5), Booking::Busy { until_ns: 160 });
        assert_eq!(
            now(&mut t, Exclusive, 120, 5),
            Booking::Busy { until_ns: 160 }
        );
    }

    #[test]
    fn a_reservation_keeps_later_normal_tests_out_of_its_time() {
        let mut t = SlotTable::new();
        assert!(matches!(now(&mut t, Normal, 0, 100), Booking::Booked(_)));
        // The exclusive test reserves the first free time, after the normal one...
        assert!(matches!(
            t.book(Exclusive, 10, 100, 50, "x"),
            Booking::Booked(_)
        ));
        // ...and a normal test that would overlap it waits until it is over,
        assert_eq!(
            now(&mut t, Normal, 20, 100),
            Booking::Busy { until_ns: 150 }
        );
        // while one that ends before it starts fits in front.
        assert!(matches!(
            t.book(Normal, 20, 20, 50, "short"),
            Booking::Booked(_)
        ));
        // A gap too short for the hold is skipped over.
        assert!(matches!(
            t.book(Exclusive, 20, 300, 50, "y"),
            Booking::Booked(_)
        ));
        assert_eq!(
            t.book(Exclusive, 20, 150, 200, "z"),
            Booking::Busy { until_ns: 350 }
        );
    }

    #[test]
    fn a_holder_that_never_finishes_frees_its_slot_at_the_deadline() {
        let mut t = SlotTable::new();
        let Booking::Booked(id) = now(&mut t, Exclusive, 1_000, 500) else {
            panic!("not booked")
        };
        assert!(matches!(
            now(&mut t, Exclusive, 1_499, 1),
            Booking::Busy { .. }
        ));
        assert!(matches!(
            now(&mut t, Exclusive, 1_500, 1),
            Booking::Booked(_)
        ));
        assert!(!t.release(id), "expired already");
    }

    #[test]
    fn release_frees_at_once_and_the_table_is_bounded() {
        let mut t = SlotTable::new();
        let Booking::Booked(id) = now(&mut t, Exclusive, 0, 1_000) else {
            panic!()
        };
        assert!(t.release(id));
        assert!(matches!(
            now(&mut t, Exclusive, 1, 1_000),
            Booking::Booked(_)
        ));
        let mut t = SlotTable::new();
        for _ in 0..MAX_SLOTS {
            assert!(matches!(now(&mut t, Background, 0, 10), Booking::Booked(_)));
        }
        assert_eq!(now(&mut t, Background, 0, 10), Booking::Full);
        assert_eq!(t.held(10).len(), 0);
        let long = "é".repeat(300);
        t.book(Normal, 20, u64::MAX, u64::MAX, &long);
        let held = t.held(20);
        assert!(held[0].holder.len() <= MAX_HOLDER);
        assert_eq!(
            held[0].from_ns,
            20 + MAX_HOLD_NS,
            "starts at most a day ahead"
        );
        assert_eq!(held[0].until_ns, 20 + 2 * MAX_HOLD_NS);
    }
}
