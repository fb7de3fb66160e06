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

/// Writes a measured rate for people, the one place fathom does: bits per second with an SI
/// prefix (k, M, G, T; 1000-based) and `digits` significant digits, whole bits below 1 kbit/s.
/// The report's tables take 4 ("35.21 Gbit/s", "940.1 Mbit/s"), the findings' sentences 3
/// ("24.1 Gbit/s", "941 Mbit/s"). A value that rounds up to the next prefix takes it ("1.000
/// Gbit/s", not "1000.0 Mbit/s"); a negative one keeps its sign; one that is not a finite number
/// is "n/a".
pub fn human(bps: f64, digits: u32) -> String {
    const PREFIX: [&str; 5] = ["", "k", "M", "G", "T"];
    if !bps.is_finite() {
        return "n/a".into();
    }
    let digits = digits.clamp(1, 12) as i32;
    let (mut v, mut u) = (bps.abs(), 0);
    let decimals = loop {
        let decimals = if u == 0 { 0 } else { decimals(v, digits) };
        if u + 1 < PREFIX.len() && v >= 1000.0 - half_unit(decimals) {
            v /= 1000.0;
            u += 1;
        } else {
            break decimals;
        }
    };
    let sign = if bps < 0.0 && v >= half_unit(decimals) {
        "-"
    } else {
        ""
    };
    format!("{sign}{v:.decimals$} {}bit/s", PREFIX[u])
}

/// How many decimals show `v` (below 1000) with `digits` significant digits once rounded:
/// 9.9996 at 4 digits rounds to 10.00, so it takes 2.
fn decimals(v: f64, digits: i32) -> usize {
    let shown = |whole: i32| (digits - whole).max(0) as usize;
    if v < 10.0 - half_unit(shown(1)) {
        shown(1)
    } else if v < 100.0 - half_unit(shown(2)) {
        shown(2)
    } else {
        shown(3)
    }
}

/// Half of the last shown digit's unit with `decimals` decimals: what rounding adds at most.
fn half_unit(decimals: usize) -> f64 {
    0.5 / 10f64.powi(decimals as i32)
}
