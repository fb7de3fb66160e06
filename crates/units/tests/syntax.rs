//! What each quantity accepts and what it refuses, the refusal naming the value; and that what
//! the formatters write reads back the same. Cases are written `TEXT=VALUE`, space-separated.

use fathom_units::duration::{self, Bare};
use fathom_units::{percent, rate, size, Refusal};
use std::time::Duration;

/// Asserts that every `TEXT=VALUE` of `cases` reads as VALUE.
fn reads(parse: impl Fn(&str) -> Result<u64, Refusal>, cases: &str) {
    for case in cases.split_whitespace() {
        let (text, value) = case.rsplit_once('=').expect("TEXT=VALUE");
        assert_eq!(parse(text), Ok(value.parse().unwrap()), "{text}");
    }
}

/// Asserts that every space-separated text of `cases` is refused ("" is always among them).
fn refuses<T: std::fmt::Debug>(parse: impl Fn(&str) -> Result<T, Refusal>, cases: &str) {
    for text in cases.split_whitespace().chain([""]) {
        assert!(parse(text).is_err(), "'{text}' was accepted");
    }
}

#[test]
fn sizes_are_bytes_1024_based() {
    reads(
        size::parse,
        "100M=104857600 64K=65536 64KB=65536 64kib=65536 1.5k=1536 2g=2147483648 1T=1099511627776 \
         7=7 7B=7",
    );
    assert_eq!(size::parse(" 16K "), Ok(16_384), "outer spaces are trimmed");
    refuses(size::parse, "K 0.3 10ms -1 7iB 1e3 99999999999T");
    assert!(size::parse("1 K").is_err(), "no space before the unit");
    let err = size::parse("1x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "'1x' is not a size; try 64K, 1M or 100M (1024-based)"
    );
}

#[test]
fn rates_are_bits_1000_based() {
    reads(
        rate::parse,
        "100M=100000000 100mbit=100000000 1G=1000000000 1.5Gbit=1500000000 64k=64000 64000=64000 \
         1T=1000000000000",
    );
    refuses(rate::parse, "G 1x -1G 0 1e3 10MB/s");
    assert!(rate::parse("1 G").is_err(), "no space before the unit");
    let bytes = rate::parse("10MBps").unwrap_err();
    assert!(bytes.reason().contains("bits per second"), "{bytes}");
    let named = rate::parse("1x").unwrap_err().to_string();
    assert!(named.starts_with("'1x' is not a rate"), "{named}");
    let link = 1_000..=10_000_000_000_000;
    let small = rate::parse_in("10", link.clone()).unwrap_err();
    assert_eq!(
        small.to_string(),
        "'10' must be between 1K and 10T bits per second"
    );
    assert!(rate::parse_in("100T", link).is_err());
}

#[test]
fn durations_take_a_unit_or_the_callers_meaning_of_a_bare_number() {
    let ns = |bare| move |text: &str| duration::parse(text, bare);
    reads(
        ns(Bare::Seconds),
        "500ms=500000000 1.5s=1500000000 2m=120000000000 1h=3600000000000 10=10000000000",
    );
    reads(
        ns(Bare::Refused),
        "2min=120000000000 100us=100000 250µs=250000 7ns=7 10MS=10000000 0=0",
    );
    reads(ns(Bare::Millis), "10=10000000 0.2s=200000000");
    refuses(ns(Bare::Seconds), "s 10x 1e3s 99999999999h");
    assert!(
        duration::parse("10 s", Bare::Seconds).is_err(),
        "no space before the unit"
    );
    let unit = duration::parse("50", Bare::Refused).unwrap_err();
    assert_eq!(unit.to_string(), "'50' needs a unit: ns, us, ms or s");
    let negative = duration::parse("-1", Bare::Seconds).unwrap_err();
    assert!(negative.reason().contains("negative"), "{negative}");
    let unknown = duration::parse("5x", Bare::Seconds).unwrap_err();
    assert!(
        unknown.to_string().contains("unknown unit 'x'"),
        "{unknown}"
    );
    let word = duration::parse("fast", Bare::Seconds).unwrap_err();
    assert!(
        word.to_string().starts_with("'fast' is not a duration"),
        "{word}"
    );
}

#[test]
fn percentages_need_their_sign() {
    assert_eq!(percent::parse("1%"), Ok(0.01));
    assert_eq!(percent::parse("0"), Ok(0.0));
    assert!(percent::parse("0.01").unwrap_err().reason().contains('%'));
    refuses(percent::parse, "101% x%");
}

#[test]
fn what_is_written_reads_back() {
    let written = [
        size::format(65_536),
        size::format(1514),
        size::format(3 << 30),
        rate::format(1_500_000),
        rate::format(2_500_000_000),
        duration::format(Duration::from_micros(1500)),
        duration::format(Duration::ZERO),
        percent::format(0.001),
    ];
    assert_eq!(
        written,
        ["64K", "1514", "3G", "1500K", "2500M", "1500us", "0", "0.1%"]
    );
    for b in [1, 1536, 65_536, 1 << 40] {
        assert_eq!(size::parse(&size::format(b)), Ok(b));
    }
    for bps in [1, 64_000, 1_500_000, 2_500_000_000] {
        assert_eq!(rate::parse(&rate::format(bps)), Ok(bps));
    }
    let d = Duration::from_nanos(2_000_000_500);
    assert_eq!(
        duration::parse_duration(&duration::format(d), Bare::Refused),
        Ok(d)
    );
    assert_eq!(percent::parse(&percent::format(0.001)), Ok(0.001));
}

#[test]
fn negative_values_are_called_negative_not_an_unknown_unit() {
    for (refusal, what) in [
        (rate::parse("-1G").unwrap_err(), "rates are positive"),
        (size::parse("-64K").unwrap_err(), "sizes are positive"),
        (
            duration::parse("-5s", Bare::Seconds).unwrap_err(),
            "durations are positive",
        ),
    ] {
        assert!(refusal.reason().starts_with("is negative"), "{refusal}");
        assert!(refusal.reason().contains(what), "{refusal}");
    }
}

#[test]
fn rates_for_people_keep_the_significant_digits_asked_for() {
    let cases: [(f64, u32, &str); 16] = [
        (35.21e9, 4, "35.21 Gbit/s"),
        (940.1e6, 4, "940.1 Mbit/s"),
        (8.8e9, 4, "8.800 Gbit/s"),
        (999.96e6, 4, "1.000 Gbit/s"),
        (99.996e6, 4, "100.0 Mbit/s"),
        (512.0, 4, "512 bit/s"),
        (999.6, 4, "1.000 kbit/s"),
        (0.0, 4, "0 bit/s"),
        (24.1e9, 3, "24.1 Gbit/s"),
        (941.4e6, 3, "941 Mbit/s"),
        (1.2345e9, 3, "1.23 Gbit/s"),
        (999.8e6, 3, "1.00 Gbit/s"),
        (3.2e3, 3, "3.20 kbit/s"),
        (-1.5e6, 3, "-1.50 Mbit/s"),
        (-0.001, 3, "0 bit/s"),
        (2.5e15, 3, "2500 Tbit/s"),
    ];
    for (bps, digits, text) in cases {
        assert_eq!(rate::human(bps, digits), text, "{bps} at {digits} digits");
    }
    assert_eq!(rate::human(f64::NAN, 4), "n/a");
    assert_eq!(rate::human(f64::INFINITY, 3), "n/a");
}

#[test]
fn sizes_for_people_are_whole_or_one_decimal() {
    let cases = [
        (0, "0 B"),
        (512, "512 B"),
        (64 << 10, "64 KB"),
        (1536 << 10, "1.5 MB"),
        (6 << 20, "6 MB"),
        (4 << 30, "4 GB"),
        (3 << 40, "3 TB"),
    ];
    for (bytes, text) in cases {
        assert_eq!(size::human(bytes), text, "{bytes}");
    }
}
