//! Parsing and printing of the values in a parameter string: durations, percentages, bit rates and
//! byte sizes. Each parser returns a short reason on failure; [`crate::params`] adds the key and the
//! value to it.
//!
//! Units follow tc's conventions so that a netem or tbf line reads the same here:
//! - durations: `ns`, `us`, `ms`, `s` (a unit is required, except for `0`);
//! - rates are **bits per second**, with `K`, `M`, `G` meaning 10^3, 10^6, 10^9 (as tc's `kbit`,
//!   `mbit`, `gbit`); an optional `bit` suffix is accepted (`100M` = `100Mbit` = `100mbit`);
//! - sizes are bytes, with `K`, `M`, `G` meaning 2^10, 2^20, 2^30 (as tc's `kb`, `mb`); an optional
//!   `B` or `b` suffix is accepted (`64K` = `64KB` = `65536`).

use std::time::Duration;

/// Parses a duration such as `50ms`, `1.5ms`, `250us`, `2s` or `0`.
pub fn duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = split_number(text);
    let value: f64 = number
        .parse()
        .map_err(|_| "is not a duration; try 50ms, 250us or 1s".to_string())?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "" if value == 0.0 => 0.0,
        "" => return Err("needs a unit: ns, us, ms or s".into()),
        _ => return Err(format!("has an unknown unit '{unit}'; use ns, us, ms or s")),
    };
    let seconds = value * scale;
    if !(0.0..=3600.0).contains(&seconds) {
        return Err("must be between 0 and 1 hour".into());
    }
    Ok(Duration::from_nanos((seconds * 1e9).round() as u64))
}

/// Parses a percentage such as `0.1%` into a probability in `[0, 1]`. `0` alone is accepted.
pub fn percent(text: &str) -> Result<f64, String> {
    let number = match text.strip_suffix('%') {
        Some(number) => number,
        None if text == "0" => "0",
        None => return Err("needs a '%' sign; write 0.1% for one packet in a thousand".into()),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| "is not a percentage; try 0.1%".to_string())?;
    if !(0.0..=100.0).contains(&value) {
        return Err("must be between 0% and 100%".into());
    }
    Ok(value / 100.0)
}

/// Parses a rate in bits per second such as `100M`, `1Gbit`, `500kbit` or `64000`.
pub fn rate_bps(text: &str) -> Result<u64, String> {
    let (number, unit) = split_number(text);
    let lower = unit.to_ascii_lowercase();
    if lower.ends_with("bps") || lower.ends_with("b/s") || lower == "b" {
        return Err("is ambiguous: rates are bits per second, write 100M or 100Mbit".into());
    }
    let prefix = lower.strip_suffix("bit").unwrap_or(&lower);
    let scale = match prefix {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        _ => {
            return Err(format!(
                "has an unknown unit '{unit}'; use K, M or G (bits per second)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| "is not a rate; try 100M or 1G".to_string())?;
    let bits = value * scale;
    if !(1.0..=1e12).contains(&bits) {
        return Err("must be between 1 bit/s and 1000G".into());
    }
    Ok(bits.round() as u64)
}

/// Parses a size in bytes such as `1514`, `64K`, `64KB` or `1M`.
pub fn bytes(text: &str) -> Result<u64, String> {
    let (number, unit) = split_number(text);
    let lower = unit.to_ascii_lowercase();
    let prefix = lower.strip_suffix('b').unwrap_or(&lower);
    let scale: u64 = match prefix {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => {
            return Err(format!(
                "has an unknown unit '{unit}'; use B, K, M or G (bytes)"
            ))
        }
    };
    let value: u64 = number
        .parse()
        .map_err(|_| "is not a whole number of bytes; try 64K".to_string())?;
    value
        .checked_mul(scale)
        .ok_or_else(|| "is too large".to_string())
}

/// Formats a duration with the largest unit that shows it exactly (`50ms`, `1500us`, `0`).
pub fn format_duration(duration: Duration) -> String {
    format_scaled(
        duration.as_nanos() as u64,
        &[
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ],
    )
}

/// Formats a rate with the largest 1000-based unit that shows it exactly (`100M`, `1500K`).
pub fn format_rate(bps: u64) -> String {
    format_scaled(
        bps,
        &[
            (1_000_000_000, "G"),
            (1_000_000, "M"),
            (1_000, "K"),
            (1, ""),
        ],
    )
}

/// Formats a size with the largest 1024-based unit that shows it exactly (`64K`, `1514`).
pub fn format_bytes(bytes: u64) -> String {
    format_scaled(
        bytes,
        &[(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K"), (1, "")],
    )
}

/// Formats a probability as a percentage without trailing zeros (`0.1%`).
pub fn format_percent(probability: f64) -> String {
    format!("{}%", probability * 100.0)
}

fn format_scaled(value: u64, units: &[(u64, &str)]) -> String {
    if value == 0 {
        return "0".into();
    }
    let (scale, unit) = units
        .iter()
        .find(|(scale, _)| value.is_multiple_of(*scale))
        .copied()
        .unwrap_or((1, ""));
    format!("{}{unit}", value / scale)
}

/// Splits `"12.5ms"` into `("12.5", "ms")`.
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("50ms"), Ok(Duration::from_millis(50)));
        assert_eq!(duration("1.5ms"), Ok(Duration::from_micros(1500)));
        assert_eq!(duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        assert!(duration("50").unwrap_err().contains("unit"));
        assert!(duration("5min").unwrap_err().contains("'min'"));
        assert!(duration("fast").is_err());
    }

    #[test]
    fn percentages() {
        assert_eq!(percent("1%"), Ok(0.01));
        assert_eq!(percent("0"), Ok(0.0));
        assert!(percent("0.01").unwrap_err().contains('%'));
        assert!(percent("101%").is_err());
    }

    #[test]
    fn rates_are_bits_and_1000_based() {
        assert_eq!(rate_bps("100M"), Ok(100_000_000));
        assert_eq!(rate_bps("100mbit"), Ok(100_000_000));
        assert_eq!(rate_bps("1G"), Ok(1_000_000_000));
        assert_eq!(rate_bps("1.5Gbit"), Ok(1_500_000_000));
        assert_eq!(rate_bps("64000"), Ok(64_000));
        assert!(rate_bps("10MBps").unwrap_err().contains("bits per second"));
        assert!(rate_bps("10T").is_err());
    }

    #[test]
    fn sizes_are_bytes_and_1024_based() {
        assert_eq!(bytes("1514"), Ok(1514));
        assert_eq!(bytes("64K"), Ok(65536));
        assert_eq!(bytes("64KB"), Ok(65536));
        assert_eq!(bytes("1M"), Ok(1 << 20));
        assert!(bytes("1.5K").is_err());
    }

    #[test]
    fn formatting_round_trips() {
        assert_eq!(format_duration(Duration::from_micros(1500)), "1500us");
        assert_eq!(format_duration(Duration::from_millis(50)), "50ms");
        assert_eq!(format_rate(1_500_000), "1500K");
        assert_eq!(format_bytes(65536), "64K");
        assert_eq!(format_percent(0.001), "0.1%");
        assert_eq!(percent(&format_percent(0.001)), Ok(0.001));
    }
}
