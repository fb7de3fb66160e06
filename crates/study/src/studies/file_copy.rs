//! file-copy: how the file size (1 MB – 1 GB) and the application's I/O size (16 KB, 60 KB,
//! 960 KB, and fathom's default 1 MB) change a disk-to-disk put, with the memory-to-memory stream
//! of the same path and size as the ceiling. The HIPPI study's rcp and ftp copies ran at
//! 4–9.5 MB/s on a link that carried 78 MB/s memory to memory: the I/O size, not the network,
//! held them back.

use super::shared::{iterations, size_label};
use crate::curve::{curve, size_x, values, Curve};
use crate::spec::{args, axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::Series;

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "file-copy",
    question: "Which I/O size copies a file fastest, disk to disk, and how far below the memory-to-memory rate of the same path does the copy run?",
    source: "rcp and ftp on HIPPI (IRIX 5.2)",
    needs_lab: false,
    sweeps,
    findings,
};

const FULL_SIZES: [&str; 4] = ["1M", "16M", "256M", "1G"];
const QUICK_SIZES: [&str; 2] = ["16M", "256M"];
const IO: [&str; 4] = ["16K", "60K", "960K", "1M"];
/// Runs shorter than this say too little to rank or compare: ten ticks of /proc/stat's usual
/// 100 Hz clock, below which a run's CPU figures are zero or one tick, and where connecting and
/// opening the files weigh as much as the transfer (a 1 MB copy lasts a few ms).
const MIN_RUN_S: f64 = 0.1;

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    let sizes: &[&str] = if quick { &QUICK_SIZES } else { &FULL_SIZES };
    vec![
        SweepSpec {
            title: "File copy (put, generated data): file size x I/O size".into(),
            kind: KindId::File,
            args: args(&["put", ":file-copy-study", "--force"]),
            axes: vec![axis("size", sizes), axis("io", &IO)],
            iterations: iterations(quick),
            x_axis: "io".into(),
            metric: metric::BITS_PER_SECOND.name.into(),
            more_metrics: vec![metric::CPU_S_PER_GB.name.into()],
            ..SweepSpec::default()
        },
        SweepSpec {
            title: "Memory-to-memory stream of the same sizes (the ceiling)".into(),
            kind: KindId::Stream,
            args: Vec::new(),
            axes: vec![axis("bytes", sizes)],
            iterations: iterations(quick),
            x_axis: "bytes".into(),
            metric: metric::BITS_PER_SECOND.name.into(),
            more_metrics: Vec::new(),
            ..SweepSpec::default()
        },
    ]
}

fn findings(series: &[Series]) -> Vec<String> {
    let [copies, streams, ..] = series else {
        return vec!["The copy or the stream sweep is missing: nothing to compare.".into()];
    };
    let ceiling = curve(streams, "bytes", metric::BITS_PER_SECOND.name, &[], size_x);
    values(copies, "size")
        .iter()
        .map(|size| {
            let c = curve(copies, "io", metric::BITS_PER_SECOND.name, &[("size", size)], size_x);
            let file = size_label(size);
            let Some(b) = shape::best(&c.ys) else {
                return format!("{file} files: no copy succeeded.");
            };
            if let Some(t) = too_short(copies, "io", &[("size", size)]) {
                return format!(
                    "{file} files: not enough data: a copy lasted {} (under {}), too short to rank the I/O sizes or to compare with the stream; run the full form, whose larger files last longer.",
                    say::seconds(t),
                    say::seconds(MIN_RUN_S)
                );
            }
            let worst = c.ys.iter().copied().fold(f64::INFINITY, f64::min);
            let spread = shape::ratio(worst, c.ys[b])
                .map(|r| format!("; the slowest I/O size reaches {} of it", say::pct(r)))
                .unwrap_or_default();
            let below = against_stream(streams, &ceiling, size, c.ys[b]);
            let w = (0..c.len())
                .min_by(|&i, &j| c.ys[i].total_cmp(&c.ys[j]))
                .unwrap_or(b);
            format!(
                "{file} files: {} I/O copies fastest ({}{below}){spread}. {}",
                size_label(&c.labels[b]),
                say::rate(c.ys[b]),
                why(copies, size, &c.labels[b], &c.labels[w])
            )
        })
        .collect()
}

/// The best copy's rate `best` against the stream of the same `size` (its rates: `ceiling`),
/// unless that stream ran too short to compare with.
fn against_stream(streams: &Series, ceiling: &Curve, size: &str, best: f64) -> String {
    let lasted = curve(streams, "bytes", metric::SECONDS.name, &[], size_x).at(size);
    if let Some(t) = lasted.filter(|t| *t < MIN_RUN_S) {
        return format!(
            "; the stream of that size lasted {}, too short to compare with",
            say::seconds(t)
        );
    }
    ceiling
        .at(size)
        .and_then(|top| shape::ratio(best, top).map(|r| (r, top)))
        .map(|(r, top)| match r > 1.0 {
            true => format!(
                ", faster than the stream's {} on the same path, which a copy that also writes a file should not be: treat both figures as unchecked",
                say::rate(top)
            ),
            false => format!(
                ", {} of the stream's {} on the same path",
                say::pct(r),
                say::rate(top)
            ),
        })
        .unwrap_or_default()
}

/// The shortest run of the points along `x` at `fixed`, when it lasted under [`MIN_RUN_S`];
/// `None` when every run lasted long enough or the series holds no durations.
fn too_short(s: &Series, x: &str, fixed: &[(&str, &str)]) -> Option<f64> {
    curve(s, x, metric::SECONDS.name, fixed, size_x)
        .ys
        .into_iter()
        .filter(|t| *t < MIN_RUN_S)
        .reduce(f64::min)
}

/// Why the I/O sizes differ for `size` files: the system calls each end makes per MB and where
/// each end's time went, at the best and the worst I/O size.
fn why(copies: &Series, size: &str, best: &str, worst: &str) -> String {
    let at = |io: &str, metric: &str| {
        let c = curve(copies, "io", metric, &[("size", size)], size_x);
        c.labels.iter().position(|l| l == io).map(|i| c.ys[i])
    };
    let calls = |io: &str| size_x(io).map(|b| (1 << 20) as f64 / b.max(1.0));
    let part = |io: &str| {
        let calls = calls(io).map(say::num).unwrap_or_else(|| "?".into());
        let share = |m: &str| at(io, m).map(say::pct).unwrap_or_else(|| "?".into());
        format!(
            "at {}: {calls} disk reads and as many writes per MB; blocked in disk reads {}, \
             disk writes {}, waiting on the network {} (sender) and {} (receiver) of the copy",
            size_label(io),
            share(metric::file::SENDER_DISK_SHARE.name),
            share(metric::file::RECEIVER_DISK_SHARE.name),
            share(metric::file::SENDER_NET_SHARE.name),
            share(metric::file::RECEIVER_NET_SHARE.name),
        )
    };
    match best == worst {
        true => format!("Why: {}.", part(best)),
        false => format!("Why: {}; {}.", part(worst), part(best)),
    }
}
