//! How a user names a stored result on the command line: `42` is run 42, `s7` is series 7.

use crate::StoreError;
use std::fmt;
use std::str::FromStr;

/// A stored run or series, as the user names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ref {
    /// A run id (`42`).
    Run(i64),
    /// A series id (`s7`).
    Series(i64),
}

impl Ref {
    /// Parses `42` or `s7`; anything else (signs, spaces, zero, other prefixes) is an error.
    pub fn parse(text: &str) -> Result<Ref, StoreError> {
        let id = |digits: &str| {
            Some(digits)
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<i64>().ok())
                .filter(|&n| n > 0)
        };
        let parsed = match text.strip_prefix('s') {
            Some(rest) => id(rest).map(Ref::Series),
            None => id(text).map(Ref::Run),
        };
        parsed.ok_or_else(|| StoreError::BadRef(text.to_string()))
    }
}

impl FromStr for Ref {
    type Err = StoreError;

    fn from_str(text: &str) -> Result<Ref, StoreError> {
        Ref::parse(text)
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ref::Run(id) => write!(f, "{id}"),
            Ref::Series(id) => write!(f, "s{id}"),
        }
    }
}
