//! Rates in bits per second: `64000`, `500k`, `100M`, `1.5Gbit`, `1T` (K = 1000, any case, an
//! optional `bit`), as tc's `kbit` and `mbit`. Units that look like bytes (`MBps`, `MB/s`) are
//! refused: a rate is always bits.

use crate::{format_exact, number, refuse_negative, split_number, Refusal};
use std::ops::RangeInclusive;

/// Reads a rate in bits per second (at least 1 bit/s).
pub fn parse(text: &str) -> Result<u64, Refusal> {
    parse_in(text, 1..=u64::MAX)
}

/// Reads a rate in bits per second that must lie in `range`; the refusal names the bounds.
pub fn parse_in(text: &str, range: RangeInclusive<u64>) -> Result<u64, Refusal> {
    refuse_negative(text, "rates", "100M")?;
    let (digits, unit) = split_number(text);
    let unit = unit.to_ascii_lowercase();
    if unit.ends_with("bps") || unit.ends_with("b/s") || unit == "b" {
        return Err(Refusal::new(
            text,
            "is ambiguous: rates are bits per second, write 100M or 100Mbit",
        ));
    }
    let scale = match unit.strip_suffix("bit").unwrap_or(&unit) {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => {
            return Err(Refusal::new(
                text,
                "is not a rate; try 100M or 1G (bits per second, K = 1000)",
            ))
        }
    };
    let bits =
        number(digits).ok_or_else(|| Refusal::new(text, "is not a rate; try 100M or 1G"))? * scale;
    if !(*range.start() as f64..=*range.end() as f64).contains(&bits.round()) {
        return Err(Refusal::new(
            text,
            format!(
                "must be between {} and {} bits per second",
                format(*range.start()),
                format(*range.end())
            ),
        ));
    }
    Ok(bits.round() as u64)
}

/// Writes a rate with the largest 1000-based unit that shows it exactly (`100M`, `1500K`), so
/// that [`parse`] reads it back.
pub fn format(bps: u64) -> String {
    format_exact(
        bps,
        &[
            (1_000_000_000_000, "T"),
            (1_000_000_000, "G"),
            (1_000_000, "M"),
            (1_000, "K"),
            (1, ""),
        ],
    )
}
