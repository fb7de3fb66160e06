//! Sizes in a profile: bytes (`1460`, `"64K"`) for data flowops, times (`"1ms"`) for `think`,
//! each fixed, `rand(a,b)` or a comma-separated list, read with fathom's units.

use fathom_proto::profile::{Size, MAX_SIZE_LIST};
use fathom_units::duration::{self, Bare};
use fathom_units::Refusal;

/// Why a size or a time in a profile is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SizeError {
    /// A bare integer below 0.
    #[error("{0} is negative")]
    Negative(i64),
    /// A bare integer over `u32::MAX`.
    #[error("{0} is over {max}", max = u32::MAX)]
    OverU32(i64),
    /// A bare integer other than 0 where a time is expected.
    #[error("{0} needs a unit; try \"{0}us\" or \"{0}ms\"")]
    NoUnit(u32),
    /// `rand(` without its `)`.
    #[error("rand( has no closing ')'; write rand(64,1K)")]
    RandUnclosed,
    /// `rand()` with other than two values.
    #[error("rand() takes two values; write rand(64,1K)")]
    RandArity,
    /// A list longer than [`MAX_SIZE_LIST`].
    #[error("a list holds at most {MAX_SIZE_LIST} sizes")]
    ListLength,
    /// Not a size or a duration, as fathom's units read them.
    #[error(transparent)]
    Units(#[from] Refusal),
    /// A time finer than a microsecond.
    #[error("'{0}' is not a whole number of microseconds")]
    Fraction(String),
    /// A value over `u32::MAX` bytes or microseconds.
    #[error("'{0}' is too large")]
    TooLarge(String),
}

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
pub(crate) fn number(i: i64, unit: Unit) -> Result<Size, SizeError> {
    match (u32::try_from(i), unit) {
        (Err(_), _) if i < 0 => Err(SizeError::Negative(i)),
        (Err(_), _) => Err(SizeError::OverU32(i)),
        (Ok(0), Unit::Micros) => Ok(Size::Fixed(0)),
        (Ok(v), Unit::Micros) => Err(SizeError::NoUnit(v)),
        (Ok(v), Unit::Bytes) => Ok(Size::Fixed(v)),
    }
}

/// A size written as a string: `64K`, `rand(64,1K)` or `64,512,1K`.
pub(crate) fn parse(text: &str, unit: Unit) -> Result<Size, SizeError> {
    if let Some(inner) = text.strip_prefix("rand(") {
        let inner = inner.strip_suffix(')').ok_or(SizeError::RandUnclosed)?;
        let (lo, hi) = inner.split_once(',').ok_or(SizeError::RandArity)?;
        return Ok(Size::Rand {
            lo: one(lo, unit)?,
            hi: one(hi, unit)?,
        });
    }
    if text.contains(',') {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > MAX_SIZE_LIST {
            return Err(SizeError::ListLength);
        }
        return parts
            .into_iter()
            .map(|p| one(p, unit))
            .collect::<Result<Vec<u32>, SizeError>>()
            .map(Size::List);
    }
    one(text, unit).map(Size::Fixed)
}

/// One value: a size in bytes or a time in µs, within u32.
fn one(text: &str, unit: Unit) -> Result<u32, SizeError> {
    let text = text.trim();
    let v = match unit {
        Unit::Bytes => fathom_units::size::parse(text)?,
        Unit::Micros => {
            let ns = duration::parse(text, Bare::Refused)?;
            if ns % 1_000 != 0 {
                return Err(SizeError::Fraction(text.into()));
            }
            ns / 1_000
        }
    };
    u32::try_from(v).map_err(|_| SizeError::TooLarge(text.into()))
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
