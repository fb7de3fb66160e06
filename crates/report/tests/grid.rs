//! Intervals sit on the grid the user asked for, whatever instant a busy sampler woke at, and a
//! counted test's last interval never runs backwards; the real instants stay in the JSON.

use fathom_proto::plan::Limit;
use fathom_proto::sample::Mark;
use fathom_report::{build, fake};

#[test]
fn late_snapshots_keep_their_grid_edges_and_say_when_they_were_taken() {
    let mut run = fake::run_data(2, true);
    // Every snapshot after the start taken 110 ms late, as a starved sampler would.
    for end in &mut run.ends {
        for s in end.snaps.iter_mut().filter(|s| s.mark != Mark::Start) {
            s.t_ns += 110_000_000;
        }
    }
    let r = build(&run);
    let edges: Vec<(f64, f64)> = r.intervals.iter().map(|i| (i.start, i.end)).collect();
    assert_eq!(
        edges,
        [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)],
        "on the grid"
    );
    let measured: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .map(|i| (i.measured_start, i.measured_end))
        .collect();
    assert_eq!(measured[0], (0.0, 1.11));
    assert_eq!(measured[3], (3.11, 4.11));
}

#[test]
fn a_counted_test_ending_before_a_drain_snapshot_ends_there() {
    let mut run = fake::run_data(1, false);
    run.plan.limit = Limit::Transactions(20_000);
    run.plan.omit_ns = 0;
    run.plan.interval_ns = 100_000_000;
    // Snapshots every 100 ms; the last transfer at 242.8 ms, noticed after a drain snapshot at
    // 300 ms (what `rr -n 20000 -i 100ms` produced: an interval "0.300-0.243").
    let times_us = [0, 100_000, 200_000, 300_000, 242_800, 400_000];
    for end in &mut run.ends {
        let marks = [
            Mark::WindowStart,
            Mark::Interval,
            Mark::Interval,
            Mark::Interval,
            Mark::WindowEnd,
            Mark::Final,
        ];
        for ((s, t), m) in end.snaps.iter_mut().zip(times_us).zip(marks) {
            s.mark = m;
            s.t_ns = t * 1000;
        }
    }
    let r = build(&run);
    let edges: Vec<(f64, f64)> = r.intervals.iter().map(|i| (i.start, i.end)).collect();
    assert_eq!(edges, [(0.0, 0.1), (0.1, 0.2), (0.2, 0.2428)]);
    for i in &r.intervals {
        assert!(i.measured_end >= i.measured_start, "{i:?}");
    }
}
