//! Numbers as the findings print them: rates with three significant digits ("24.1 Gbit/s",
//! written by fathom_units as every rate for people), sizes back in the form they are typed
//! ("48K", "1M", "256 B"), percentages as integers (one decimal under 10), counts with thousands
//! separators, times in µs or s. Non-finite input prints as "n/a", so a sentence never holds
//! NaN.

/// `v` with three significant digits (at least; no decimals from 100 up).
fn sig3(v: f64) -> String {
    let a = v.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}")
}

/// A bit rate with three significant digits: "24.1 Gbit/s", "941 Mbit/s", "3.20 kbit/s"
/// (`fathom_units::rate::human`, as every rate fathom writes for people).
pub fn rate(bps: f64) -> String {
    fathom_units::rate::human(bps, 3)
}

/// A size in bytes as typed, in the largest unit it is a whole multiple of: "256 B", "1460 B",
/// "48K", "1M", "1536K", "2G".
pub fn size(bytes: u64) -> String {
    let units = [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    units
        .iter()
        .find(|(scale, _)| bytes > 0 && bytes.is_multiple_of(*scale))
        .map_or_else(
            || format!("{bytes} B"),
            |(scale, unit)| format!("{}{unit}", bytes / scale),
        )
}

/// A measured size in bytes, rounded, in the typed units: "51K", "1.1M", "700 B".
pub fn approx_size(bytes: f64) -> String {
    const K: f64 = 1024.0;
    if bytes >= K * K * K {
        format!("{}G", trim_zeros(&format!("{:.1}", bytes / (K * K * K))))
    } else if bytes >= K * K {
        format!("{}M", trim_zeros(&format!("{:.1}", bytes / (K * K))))
    } else if bytes >= K {
        format!("{:.0}K", bytes / K)
    } else {
        format!("{bytes:.0} B")
    }
}

fn trim_zeros(s: &str) -> String {
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A percentage from a fraction (0.042 → "4.2%", 0.96 → "96%").
pub fn pct(fraction: f64) -> String {
    percent(fraction * 100.0)
}

/// A percentage given in percent (4.2 → "4.2%", 96.4 → "96%").
pub fn percent(p: f64) -> String {
    if !p.is_finite() {
        return "n/a".into();
    }
    // Rounded first, so that -0.01 prints as 0%, not -0%.
    if p.abs() < 9.95 {
        let r = (p * 10.0).round() / 10.0 + 0.0;
        format!("{}%", trim_zeros(&format!("{r:.1}")))
    } else {
        format!("{:.0}%", p.round())
    }
}

/// A count rounded to an integer with thousands separators: "6,978".
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v.round() < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// A ratio as a factor: "8.1×", "12×".
pub fn times(r: f64) -> String {
    tenths_below_ten(r, "×", |r| format!("{r:.0}"))
}

/// Microseconds: "140 µs", "7.5 µs", "1,250 µs".
pub fn micros(us: f64) -> String {
    tenths_below_ten(us, " µs", count)
}

/// `v` to a tenth where it shows below 10, else as `large` writes it; then `unit`.
fn tenths_below_ten(v: f64, unit: &str, large: fn(f64) -> String) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v.abs() < 9.95 {
        format!("{v:.1}{unit}")
    } else {
        format!("{}{unit}", large(v))
    }
}

/// Seconds with three significant digits: "0.523 s", "4.20 s", "12.3 s".
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        return "n/a".into();
    }
    if s.abs() < 1.0 && s != 0.0 {
        format!("{s:.3} s")
    } else {
        format!("{} s", sig3(s))
    }
}

/// A plain number with three significant digits ("1.20", "14.6").
pub fn num(v: f64) -> String {
    if v.is_finite() {
        sig3(v)
    } else {
        "n/a".into()
    }
}

/// "1 connection", "10 connections".
pub fn plural(n: &str, one: &str, many: &str) -> String {
    if n == "1" {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_three_significant_digits() {
        assert_eq!(rate(24.1e9), "24.1 Gbit/s");
        assert_eq!(rate(941.4e6), "941 Mbit/s");
        assert_eq!(rate(1.2345e9), "1.23 Gbit/s");
        assert_eq!(rate(999.8e6), "1.00 Gbit/s");
        assert_eq!(rate(0.0), "0 bit/s");
        assert_eq!(rate(f64::NAN), "n/a");
    }

    #[test]
    fn measured_sizes_round_to_typed_units() {
        assert_eq!(approx_size(1.2e6), "1.1M");
        assert_eq!(approx_size(4.0 * 1024.0 * 1024.0), "4M");
        assert_eq!(approx_size(52_000.0), "51K");
        assert_eq!(approx_size(700.0), "700 B");
    }

    #[test]
    fn sizes_come_back_as_typed() {
        assert_eq!(size(49152), "48K");
        assert_eq!(size(1 << 20), "1M");
        assert_eq!(size(256), "256 B");
        assert_eq!(size(1460), "1460 B");
        assert_eq!(size(1536 << 10), "1536K");
        assert_eq!(size(0), "0 B");
        assert_eq!(size(48 << 20), "48M");
    }

    #[test]
    fn percentages_counts_and_times_read_well() {
        assert_eq!(pct(0.042), "4.2%");
        assert_eq!(pct(0.964), "96%");
        assert_eq!(percent(-54.2), "-54%");
        assert_eq!(percent(2.0), "2%");
        assert_eq!(percent(-0.01), "0%");
        assert_eq!(count(6978.4), "6,978");
        assert_eq!(count(1234567.0), "1,234,567");
        assert_eq!(count(-1500.0), "-1,500");
        assert_eq!(times(8.14), "8.1×");
        assert_eq!(micros(140.2), "140 µs");
        assert_eq!(micros(7.46), "7.5 µs");
        assert_eq!(seconds(0.5234), "0.523 s");
        assert_eq!(seconds(4.2), "4.20 s");
        assert_eq!(plural("10", "connection", "connections"), "10 connections");
    }
}
