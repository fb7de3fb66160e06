//! Rates in bits per second: `64000`, `500k`, `100M`, `1.5Gbit`, `1T` (K = 1000, any case, an
//! optional `bit`), as tc's `kbit` and `mbit`. Units that look like bytes (`MBps`, `MB/s`) are
//! refused: a rate is always bits.

use crate::{format_exact, number, split_number, Refusal};
use std::ops::RangeInclusive;

/// Reads a rate in bits per second (at least 1 bit/s).
pub fn parse(text: &str) -> Result<u64, Refusal> {
    parse_in(text, 1..=u64::MAX)
}

/// Reads a rate in bits per second that must lie in `range`; the refusal names the bounds.
pub fn parse_in(text: &str, range: RangeInclusive<u64>) -> Result<u64, Refusal> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_bits_and_1000_based() {
        assert_eq!(parse("100M"), Ok(100_000_000));
        assert_eq!(parse("100mbit"), Ok(100_000_000));
        assert_eq!(parse("1G"), Ok(1_000_000_000));
        assert_eq!(parse("1.5Gbit"), Ok(1_500_000_000));
        assert_eq!(parse("2.5Gbit"), Ok(2_500_000_000));
        assert_eq!(parse("64k"), Ok(64_000));
        assert_eq!(parse("64000"), Ok(64_000));
        assert_eq!(parse("1T"), Ok(1_000_000_000_000));
    }

    #[test]
    fn bad_rates_are_refused_naming_the_value() {
        assert!(parse("10MBps")
            .unwrap_err()
            .reason()
            .contains("bits per second"));
        assert!(parse("1x")
            .unwrap_err()
            .to_string()
            .starts_with("'1x' is not a rate"));
        for bad in ["", "G", "1x", "-1G", "1 G", "0", "1e3", "10MB/s"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let r = parse_in("10", 1_000..=10_000_000_000_000).unwrap_err();
        assert_eq!(
            r.to_string(),
            "'10' must be between 1K and 10T bits per second"
        );
        assert!(parse_in("100T", 1_000..=10_000_000_000_000).is_err());
    }

    #[test]
    fn formatting_reads_back() {
        assert_eq!(format(1_500_000), "1500K");
        assert_eq!(format(1_000_000_000), "1G");
        assert_eq!(format(2_500_000_000), "2500M");
        for b in [1, 64_000, 1_500_000, 2_500_000_000] {
            assert_eq!(parse(&format(b)), Ok(b));
        }
    }
}
