//! Link rates: `"100M"`, `"1G"`, `"2.5Gbit"` → bits per second.

/// Parses a rate in bits per second with an optional decimal unit (`k`, `M`, `G`, `T`, case
/// insensitive) and an optional `bit` suffix. Fractions are allowed: `"2.5G"`.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let bad = || {
        format!("rate '{text}': expected bits per second with an optional k, M, G or T, e.g. 100M or 1G")
    };
    let lower = text.trim().to_ascii_lowercase();
    let body = lower.strip_suffix("bit").unwrap_or(&lower);
    let (number, scale) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1e3),
        Some('m') => (&body[..body.len() - 1], 1e6),
        Some('g') => (&body[..body.len() - 1], 1e9),
        Some('t') => (&body[..body.len() - 1], 1e12),
        _ => (body, 1.0),
    };
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bps = (value * scale).round();
    if !(1e3..=1e13).contains(&bps) {
        return Err(format!(
            "rate '{text}': must be between 1k and 10T bits per second"
        ));
    }
    Ok(bps as u64)
}

/// Formats bits per second the way [`parse_rate`] reads them: `1000000000` → `"1G"`.
pub fn format_rate(bps: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1_000_000_000_000, "T"),
        (1_000_000_000, "G"),
        (1_000_000, "M"),
        (1_000, "k"),
    ];
    for (scale, unit) in UNITS {
        if bps >= scale {
            let value = bps as f64 / scale as f64;
            return format!("{}{unit}", (value * 1000.0).round() / 1000.0);
        }
    }
    bps.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rates() {
        assert_eq!(parse_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100M"), Ok(100_000_000));
        assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("2.5Gbit"), Ok(2_500_000_000));
        assert_eq!(parse_rate("64k"), Ok(64_000));
        assert_eq!(parse_rate("5000"), Ok(5_000));
    }

    #[test]
    fn rejects_bad_rates() {
        for bad in ["", "G", "1x", "-1G", "1 G", "0", "10", "1e3", "100T"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_rates() {
        assert_eq!(format_rate(1_000_000_000), "1G");
        assert_eq!(format_rate(2_500_000_000), "2.5G");
        assert_eq!(format_rate(64_000), "64k");
    }
}
