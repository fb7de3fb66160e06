//! Sizes in a profile: bytes (`1460`, `"64K"`) for data flowops, times (`"1ms"`) for `think`,
//! each fixed, `rand(a,b)` or a comma-separated list, read with fathom's units.

use fathom_proto::profile::{Size, MAX_SIZE_LIST};
use fathom_units::duration::{self, Bare};

/// What a size counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Bytes (1024-based suffixes).
    Bytes,
    /// Microseconds, written as durations.
    Micros,
}

impl Unit {
    /// What a good value looks like, for messages.
    pub(crate) fn example(self) -> &'static str {
        match self {
            Unit::Bytes => "a size such as 1460, \"64K\", \"rand(64,1K)\" or [64, 512]",
            Unit::Micros => "a time such as \"1ms\", \"rand(100us,1ms)\" or [\"1ms\", \"5ms\"]",
        }
    }
}

/// A bare integer: bytes; for times only 0, since a duration needs a unit.
pub(crate) fn number(i: i64, unit: Unit) -> Result<Size, String> {
    match (u32::try_from(i), unit) {
        (Err(_), _) if i < 0 => Err(format!("{i} is negative")),
        (Err(_), _) => Err(format!("{i} is over {}", u32::MAX)),
        (Ok(0), Unit::Micros) => Ok(Size::Fixed(0)),
        (Ok(v), Unit::Micros) => Err(format!("{v} needs a unit; try \"{v}us\" or \"{v}ms\"")),
        (Ok(v), Unit::Bytes) => Ok(Size::Fixed(v)),
    }
}

/// A size written as a string: `64K`, `rand(64,1K)` or `64,512,1K`.
pub(crate) fn parse(text: &str, unit: Unit) -> Result<Size, String> {
    if let Some(inner) = text.strip_prefix("rand(") {
        let inner = inner
            .strip_suffix(')')
            .ok_or("rand( has no closing ')'; write rand(64,1K)")?;
        let (lo, hi) = inner
            .split_once(',')
            .ok_or("rand() takes two values; write rand(64,1K)")?;
        return Ok(Size::Rand {
            lo: one(lo, unit)?,
            hi: one(hi, unit)?,
        });
    }
    if text.contains(',') {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > MAX_SIZE_LIST {
            return Err(format!("a list holds at most {MAX_SIZE_LIST} sizes"));
        }
        return parts
            .into_iter()
            .map(|p| one(p, unit))
            .collect::<Result<Vec<u32>, String>>()
            .map(Size::List);
    }
    one(text, unit).map(Size::Fixed)
}

/// One value: a size in bytes or a time in µs, within u32.
fn one(text: &str, unit: Unit) -> Result<u32, String> {
    let text = text.trim();
    let v = match unit {
        Unit::Bytes => fathom_units::size::parse(text).map_err(|r| r.to_string())?,
        Unit::Micros => {
            let ns = duration::parse(text, Bare::Refused).map_err(|r| r.to_string())?;
            if ns % 1_000 != 0 {
                return Err(format!("'{text}' is not a whole number of microseconds"));
            }
            ns / 1_000
        }
    };
    u32::try_from(v).map_err(|_| format!("'{text}' is too large"))
}

/// A size as a profile writes it: `64K`, `rand(64,1K)`, `[64, 512]`; times as durations.
pub(crate) fn format(s: &Size, unit: Unit) -> String {
    let f = |v: u32| match unit {
        Unit::Bytes => fathom_units::size::format(u64::from(v)),
        Unit::Micros => duration::format(std::time::Duration::from_micros(u64::from(v))),
    };
    match s {
        Size::Fixed(v) => f(*v),
        Size::Rand { lo, hi } => format!("rand({},{})", f(*lo), f(*hi)),
        Size::List(l) => {
            let items: Vec<String> = l.iter().map(|v| f(*v)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}
