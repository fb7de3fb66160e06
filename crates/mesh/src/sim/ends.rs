//! The simulation's members: a slot table each, in this process, and the outages that make
//! them unreachable for a while.

use crate::dispatch::{Ends, Started, Unreachable};
use crate::schedule::Due;
use crate::slots::{Booking, SlotTable};
use std::collections::HashMap;

/// Every member's slot table, on the virtual clock.
pub struct SimEnds {
    tables: HashMap<String, SlotTable>,
    /// (member, from, to): unreachable in between.
    outages: Vec<(String, u64, u64)>,
    /// The virtual time now.
    pub now: u64,
    /// Probes of members down.
    pub probes: u64,
}

impl SimEnds {
    /// Tables for `names`, with outages by member index.
    pub fn new(names: &[String], outages: &[(usize, u64, u64)]) -> SimEnds {
        SimEnds {
            tables: names
                .iter()
                .map(|n| (n.clone(), SlotTable::new()))
                .collect(),
            outages: outages
                .iter()
                .filter_map(|(i, a, b)| Some((names.get(*i)?.clone(), *a, *b)))
                .collect(),
            now: 0,
            probes: 0,
        }
    }

    /// Gives back both slots of a test that ended.
    pub fn release_both(&mut self, s: &Started) {
        self.release(&s.due.source, s.source_slot);
        self.release(&s.due.target, s.target_slot);
    }

    /// Fails while `member` is in an outage.
    fn reach(&self, member: &str) -> Result<(), Unreachable> {
        let out = self
            .outages
            .iter()
            .any(|(m, a, b)| m == member && (*a..*b).contains(&self.now));
        match out {
            true => Err(Unreachable("connection refused (simulated outage)".into())),
            false => Ok(()),
        }
    }
}

impl Ends for SimEnds {
    fn book(&mut self, member: &str, due: &Due, start_ns: u64) -> Result<Booking, Unreachable> {
        self.reach(member)?;
        let table = self
            .tables
            .get_mut(member)
            .ok_or_else(|| Unreachable("not a member".into()))?;
        Ok(table.book(due.class, self.now, start_ns, due.hold_ns, ""))
    }

    fn release(&mut self, member: &str, id: u64) {
        if let Some(t) = self.tables.get_mut(member) {
            t.release(id);
        }
    }

    fn probe(&mut self, member: &str) -> Result<(), Unreachable> {
        self.probes += 1;
        self.reach(member)
    }
}
