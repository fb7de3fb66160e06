//! Durations: a number and a unit, `ns`, `us` (or `µs`), `ms`, `s` (or `sec`), `m` (or `min`),
//! `h`, any case: `500ms`, `1.5s`, `2m`, `100us`. What a number without a unit means is the
//! caller's choice ([`Bare`]): seconds on the command line, milliseconds for the studies' delays,
//! refused (except `0`) in the WAN emulator's parameters, where tc would read microseconds.

use crate::{number, split_number, Refusal};
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
    if text.trim_start().starts_with('-') {
        return Err(Refusal::new(
            text,
            "is negative; durations are positive, e.g. 10s",
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_fractions() {
        assert_eq!(parse("500ms", Bare::Seconds), Ok(500_000_000));
        assert_eq!(parse("1.5s", Bare::Seconds), Ok(1_500_000_000));
        assert_eq!(parse("2m", Bare::Seconds), Ok(120_000_000_000));
        assert_eq!(parse("2min", Bare::Refused), Ok(120_000_000_000));
        assert_eq!(parse("1h", Bare::Seconds), Ok(3_600_000_000_000));
        assert_eq!(parse("100us", Bare::Refused), Ok(100_000));
        assert_eq!(parse("250µs", Bare::Refused), Ok(250_000));
        assert_eq!(parse("7ns", Bare::Refused), Ok(7));
        assert_eq!(parse("10MS", Bare::Refused), Ok(10_000_000));
    }

    #[test]
    fn a_bare_number_means_what_the_caller_says() {
        assert_eq!(parse("10", Bare::Seconds), Ok(10_000_000_000));
        assert_eq!(parse("10", Bare::Millis), Ok(10_000_000));
        assert_eq!(parse("0", Bare::Refused), Ok(0));
        assert_eq!(
            parse("50", Bare::Refused).unwrap_err().to_string(),
            "'50' needs a unit: ns, us, ms or s"
        );
    }

    #[test]
    fn bad_durations_are_refused_naming_the_value() {
        assert!(parse("-1", Bare::Seconds)
            .unwrap_err()
            .reason()
            .contains("negative"));
        assert!(parse("5x", Bare::Seconds)
            .unwrap_err()
            .to_string()
            .contains("'x'"));
        assert!(parse("fast", Bare::Seconds)
            .unwrap_err()
            .to_string()
            .starts_with("'fast' is not a duration"));
        for bad in ["", "s", "10 s", "1e3s", "99999999999h"] {
            assert!(parse(bad, Bare::Seconds).is_err(), "{bad}");
        }
    }

    #[test]
    fn formatting_reads_back() {
        assert_eq!(format(Duration::from_micros(1500)), "1500us");
        assert_eq!(format(Duration::from_millis(50)), "50ms");
        assert_eq!(format(Duration::ZERO), "0");
        let d = Duration::from_nanos(2_000_000_500);
        assert_eq!(parse_duration(&format(d), Bare::Refused), Ok(d));
    }
}
