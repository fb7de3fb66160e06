//! Sizes in bytes: `65536`, `64K`, `64KB`, `64KiB`, `1.5M`, `2G`, `1T` (K = 1024, any case, an
//! optional `B` or `iB`), as iperf and ttcp take them and tc writes `kb`. A fraction is fine
//! when the bytes come out whole (`1.5K` = 1536).

use crate::{format_exact, number, refuse_negative, split_number, Refusal};

const TRY: &str = "is not a size; try 64K, 1M or 100M (1024-based)";

/// Reads a size in bytes.
pub fn parse(text: &str) -> Result<u64, Refusal> {
    refuse_negative(text, "sizes", "64K")?;
    let bad = || Refusal::new(text, TRY);
    let (digits, unit) = split_number(text);
    let value = number(digits).ok_or_else(bad)?;
    let unit = unit.to_ascii_lowercase();
    let prefix = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let shift = match prefix {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(bad()),
    };
    if unit.ends_with("ib") && shift == 0 {
        return Err(bad());
    }
    let bytes = value * (1u64 << shift) as f64;
    if bytes >= u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// Writes a size with the largest 1024-based unit that shows it exactly (`64K`, `1514`), so
/// that [`parse`] reads it back.
pub fn format(bytes: u64) -> String {
    format_exact(
        bytes,
        &[
            (1 << 40, "T"),
            (1 << 30, "G"),
            (1 << 20, "M"),
            (1 << 10, "K"),
            (1, ""),
        ],
    )
}

/// Writes a measured size for people: bytes in the largest 1024-based unit below it (B, KB,
/// MB, GB, TB), whole when it is, else with one decimal: "512 B", "64 KB", "1.5 MB", "6 MB".
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
