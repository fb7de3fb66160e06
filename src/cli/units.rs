//! Parsers for the command line's values: sizes and durations (read by `fathom-units`, as every
//! part of fathom reads them), socket I/O sizes, CPU lists ("0-3,6") and `--affinity`.

use super::error::ValueError;

/// A size in bytes: "65536", "64K", "1.5M", "2G" (K = 1024). Errors say what a size looks like.
pub fn parse_size(s: &str) -> Result<u64, ValueError> {
    Ok(fathom_units::size::parse(s)?)
}

/// A size that must fit a socket call: 1 byte up to 2 GB - 1.
pub fn parse_io_size(s: &str) -> Result<u32, ValueError> {
    let v = parse_size(s)?;
    if v == 0 {
        return Err(ValueError::ZeroSize);
    }
    u32::try_from(v)
        .ok()
        .filter(|v| *v <= i32::MAX as u32)
        .ok_or_else(|| ValueError::SizeTooLarge(s.into()))
}

/// A count such as `-P N`: a whole number (the plan's checks refuse the ones too small). A
/// negative or malformed count is named as such, not as a number outside `u32`'s range.
pub fn parse_count(s: &str) -> Result<u32, ValueError> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match s.strip_prefix('-') {
        Some(rest) if digits(rest) => Err(ValueError::Negative(s.into())),
        _ if digits(s) => s.parse().map_err(|_| ValueError::CountTooLarge {
            value: s.into(),
            max: u32::MAX,
        }),
        _ => Err(ValueError::NotWhole(s.into())),
    }
}

/// A duration in ns: "10" (seconds), "10s", "500ms", "1.5s", "2m", "100us".
pub fn parse_duration(s: &str) -> Result<u64, ValueError> {
    Ok(fathom_units::duration::parse(
        s,
        fathom_units::duration::Bare::Seconds,
    )?)
}

/// A CPU list: "0", "0-3", "0,2,4-5".
pub fn parse_cpulist(s: &str) -> Result<Vec<u32>, ValueError> {
    let bad = || ValueError::NotCpuList(s.into());
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b || b - a > 4096 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

/// CPU lists for the controller's end and, after a slash, the agent's.
pub type Affinity = (Option<Vec<u32>>, Option<Vec<u32>>);

/// `--affinity LOCAL[/REMOTE]`: the controller's CPUs and, after a slash, the agent's.
pub fn parse_affinity(s: &str) -> Result<Affinity, ValueError> {
    let (l, r) = match s.split_once('/') {
        Some((l, r)) => (l, Some(r)),
        None => (s, None),
    };
    let list = |x: &str| {
        if x.is_empty() {
            Ok(None)
        } else {
            parse_cpulist(x).map(Some)
        }
    };
    Ok((list(l)?, r.map(list).transpose()?.flatten()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_1024_based() {
        assert_eq!(parse_size("100M").unwrap(), 104_857_600);
        assert_eq!(parse_size("64K").unwrap(), 65_536);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("7").unwrap(), 7);
        assert!(parse_size("1x")
            .unwrap_err()
            .to_string()
            .contains("'1x' is not a size"));
        assert!(parse_size("").is_err());
        assert!(parse_size("0.3").is_err());
        assert_eq!(
            parse_io_size("0").unwrap_err().to_string(),
            "must be at least 1 byte"
        );
        assert!(parse_io_size("4G").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), 10_000_000_000);
        assert_eq!(parse_duration("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("2m").unwrap(), 120_000_000_000);
        assert!(parse_duration("-1")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(parse_duration("10x").is_err());
        assert_eq!(
            parse_duration("5sec").unwrap(),
            parse_duration("5s").unwrap()
        );
        assert_eq!(
            parse_duration("2min").unwrap(),
            parse_duration("2m").unwrap()
        );
        assert_eq!(parse_size("100MB").unwrap(), parse_size("100M").unwrap());
        assert_eq!(parse_size("100MiB").unwrap(), parse_size("100M").unwrap());
    }

    #[test]
    fn cpu_lists_and_affinity() {
        assert_eq!(parse_cpulist("0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_cpulist("3-1").is_err());
        assert_eq!(
            parse_affinity("0/1").unwrap(),
            (Some(vec![0]), Some(vec![1]))
        );
        assert_eq!(parse_affinity("/1").unwrap(), (None, Some(vec![1])));
        assert_eq!(parse_affinity("0-1").unwrap(), (Some(vec![0, 1]), None));
    }
}
