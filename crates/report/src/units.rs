//! Option values read as numbers, the way the command line writes them: "16K" (1024-based
//! sizes), "10ms" (durations), "1460" (plain numbers). Shared by the plots, which place swept
//! values on an axis, and the studies, which read their curves.

/// The number and the (lower-cased) unit of `s`: "1.5M" → (1.5, "m"). `None` without a number.
pub fn number_and_unit(s: &str) -> Option<(f64, String)> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    v.is_finite().then(|| (v, unit.trim().to_ascii_lowercase()))
}

/// A size in bytes: "256", "16K", "1.5M", "2G" (1024-based). `None` for anything else.
pub fn size_bytes(s: &str) -> Option<f64> {
    let (v, unit) = number_and_unit(s)?;
    let mult = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(v * mult).filter(|x| x.is_finite())
}

/// A duration in seconds: "100us", "10ms", "0.2s", "2min". A bare number is not a duration.
pub fn duration_s(s: &str) -> Option<f64> {
    let (v, unit) = number_and_unit(s)?;
    let per = match unit.as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        _ => return None,
    };
    Some(v * per).filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_durations_and_plain_numbers() {
        assert_eq!(size_bytes("16K"), Some(16384.0));
        assert_eq!(size_bytes("1.5m"), Some(1_572_864.0));
        assert_eq!(size_bytes("1460"), Some(1460.0));
        assert_eq!(size_bytes("10ms"), None);
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
        assert!(close(duration_s("10ms"), 0.01));
        assert!(close(duration_s("100us"), 1e-4));
        assert_eq!(duration_s("10"), None);
        assert_eq!(number_and_unit("on"), None);
    }
}
