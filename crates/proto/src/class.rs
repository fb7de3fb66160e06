//! Interference classes of mesh tests, as pScheduler defines them: which tests may share a
//! member's time. Slot bookings carry them to agents ([`crate::msg::BookSlot`]); the mesh
//! crate schedules by them.
//!
//! | running \ wants | exclusive | normal | background |
//! | --- | --- | --- | --- |
//! | exclusive | no | no | yes |
//! | normal | no | yes | yes |
//! | background | yes | yes | yes |

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a test shares a member's time with the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Never overlaps another exclusive or normal test on either end (bulk TCP, UDP at a rate,
    /// file copies): its figure is the path's capacity, which any other traffic would take.
    Exclusive,
    /// Avoids exclusive tests (request/response latency), but runs beside other normal ones.
    Normal,
    /// Runs at any time (small probes).
    Background,
}

impl Class {
    /// Every class, in the order the file and the documents name them.
    pub const ALL: [Class; 3] = [Class::Exclusive, Class::Normal, Class::Background];

    /// True when a test of class `self` and one of `other` may not overlap on one member.
    pub fn conflicts(self, other: Class) -> bool {
        use Class::*;
        matches!(
            (self, other),
            (Exclusive, Exclusive) | (Exclusive, Normal) | (Normal, Exclusive)
        )
    }

    /// The class a test of `kind` (its subcommand: stream, rr, crr, udp, file) takes unless the
    /// file says otherwise: bulk transfers are exclusive, request/response normal.
    pub fn of_kind(kind: &str) -> Class {
        match kind {
            "rr" | "crr" => Class::Normal,
            _ => Class::Exclusive,
        }
    }

    /// Its name in the file and in documents.
    pub fn name(self) -> &'static str {
        match self {
            Class::Exclusive => "exclusive",
            Class::Normal => "normal",
            Class::Background => "background",
        }
    }

    /// The class named `name`, if any.
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_are_pschedulers_and_symmetric() {
        use Class::*;
        for a in Class::ALL {
            for b in Class::ALL {
                assert_eq!(a.conflicts(b), b.conflicts(a), "{a} {b}");
            }
            assert!(!a.conflicts(Background) && !Background.conflicts(a));
        }
        assert!(Exclusive.conflicts(Exclusive) && Exclusive.conflicts(Normal));
        assert!(!Normal.conflicts(Normal));
    }

    #[test]
    fn kinds_default_as_the_issue_says() {
        assert_eq!(Class::of_kind("stream"), Class::Exclusive);
        assert_eq!(Class::of_kind("udp"), Class::Exclusive);
        assert_eq!(Class::of_kind("file"), Class::Exclusive);
        assert_eq!(Class::of_kind("rr"), Class::Normal);
        assert_eq!(Class::of_kind("crr"), Class::Normal);
        assert_eq!(Class::from_name("background"), Some(Class::Background));
        assert_eq!(Class::from_name("bulk"), None);
    }
}
