//! Findings checked against their data before they are printed: a run too short to rank says
//! "not enough data", and a lab's emulator is kept apart from what the ends spent.

mod common;

use common::{add, findings, line_rate, series, G};

#[test]
fn file_copy_says_not_enough_data_for_runs_too_short_to_rank() {
    let bps = "bits_per_second";
    let mut copies = series(
        &["put"],
        &[("size", &["1M", "16M"]), ("io", &["60K", "1M"])],
    );
    for (size, io, y, secs) in [
        ("1M", "60K", 6.0, 0.0014),
        ("1M", "1M", 3.0, 0.0028),
        ("16M", "60K", 4.0, 0.4),
        ("16M", "1M", 5.0, 0.3),
    ] {
        add(&mut copies, &[size, io], &[(bps, y * G), ("seconds", secs)]);
    }
    let mut streams = series(&[], &[("bytes", &["1M", "16M"])]);
    add(
        &mut streams,
        &["1M"],
        &[(bps, 3.52 * G), ("seconds", 0.0024)],
    );
    add(&mut streams, &["16M"], &[(bps, 4.0 * G), ("seconds", 0.05)]);
    let mut long = streams.clone();
    long.points[1].metrics[1].stat = fathom_report::stats::describe(&[0.5], 0.95);
    let said = findings("file-copy", &[copies.clone(), long]);
    assert!(
        said[1].contains("(5.00 Gbit/s, faster than the stream's 4.00 Gbit/s on the same path, which a copy that also writes a file should not be: treat both figures as unchecked)"),
        "{said:?}"
    );
    let said = findings("file-copy", &[copies, streams]);
    assert_eq!(
        said[0],
        "1M files: not enough data: a copy lasted 0.001 s (under 0.100 s), too short to rank the I/O sizes or to compare with the stream; run the full form, whose larger files last longer."
    );
    assert!(
        said[1].starts_with("16M files: 1M I/O copies fastest (5.00 Gbit/s; the stream of that size lasted 0.050 s, too short to compare with)"),
        "{said:?}"
    );
}

#[test]
fn streams_to_line_rate_shows_the_emulator_apart_from_what_the_ends_spent() {
    let m = 1e6;
    let mut tls = line_rate(&["--tls"], &[("1", 190.0 * m, 5.0, 90.0, 90.0)]);
    let emulator = fathom_report::series::MetricStat {
        name: "emulator_cpu_percent".into(),
        stat: fathom_report::stats::describe(&[46.5], 0.95),
    };
    tls.points[0].metrics.push(emulator);
    assert_eq!(
        findings("streams-to-line-rate", &[tls])[..2],
        [
            "TLS: 1 stream reaches 190 Mbit/s, 95% of the 200M link; CPU there: 90% (both ends share this machine's CPUs; of it the WAN emulator's forwarder took 47%, left out of CPU per GB).",
            "TLS: one stream carries 190 Mbit/s (95%) at 5.00 CPU-seconds per GB at the ends (the emulator left out).",
        ]
    );
}
