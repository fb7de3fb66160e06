//! Durations: a number and a unit, `ns`, `us` (or `µs`), `ms`, `s` (or `sec`), `m` (or `min`),
//! `h`, any case: `500ms`, `1.5s`, `2m`, `100us`. What a number without a unit means is the
//! caller's choice ([`Bare`]): seconds on the command line, milliseconds for the studies' delays,
//! refused (except `0`) in the WAN emulator's parameters, where tc would read microseconds.

use crate::{number, refuse_negative, split_number, Refusal};
use std::time::Duration;

/// What a number without a unit means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bare {
    /// Seconds (`10` = 10 s).
    Seconds,
    /// Milliseconds (`10` = 10 ms).
    Millis,
    /// Nothing: a unit is required, except for `0`.
    Refused,
}

/// Reads a duration into nanoseconds.
pub fn parse(text: &str, bare: Bare) -> Result<u64, Refusal> {
    refuse_negative(text, "durations", "10s")?;
    let (digits, unit) = split_number(text);
    let value = number(digits)
        .ok_or_else(|| Refusal::new(text, "is not a duration; try 10s, 500ms or 250us"))?;
    let ns_per = match (unit.to_lowercase().as_str(), bare) {
        ("ns", _) => 1.0,
        ("us" | "µs", _) => 1e3,
        ("ms", _) | ("", Bare::Millis) => 1e6,
        ("s" | "sec", _) | ("", Bare::Seconds) => 1e9,
        ("m" | "min", _) => 60e9,
        ("h", _) => 3600e9,
        ("", Bare::Refused) if value == 0.0 => 0.0,
        ("", Bare::Refused) => return Err(Refusal::new(text, "needs a unit: ns, us, ms or s")),
        _ => {
            return Err(Refusal::new(
                text,
                format!("has an unknown unit '{unit}'; use ns, us, ms, s, min or h"),
            ))
        }
    };
    let ns = value * ns_per;
    if ns >= u64::MAX as f64 {
        return Err(Refusal::new(text, "is too long"));
    }
    Ok(ns.round() as u64)
}

/// Reads a duration into a [`Duration`].
pub fn parse_duration(text: &str, bare: Bare) -> Result<Duration, Refusal> {
    parse(text, bare).map(Duration::from_nanos)
}

/// Writes a duration with the largest unit that shows it exactly (`50ms`, `1500us`, `0`), so
/// that [`parse`] reads it back.
pub fn format(d: Duration) -> String {
    crate::format_exact(
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        &[
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ],
    )
}
