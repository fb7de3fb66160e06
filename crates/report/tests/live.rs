//! Interval lines while a run goes: fed the fake run's snapshots one by one, the live lines
//! come out as each interval closes, and with the rest of the table they read exactly as the
//! table printed after the run; with several client hosts, `--per-host` adds each host's share.

use fathom_report::live::Live;
use fathom_report::{fake, table, RunData};

/// `run` as it stood when each end had taken its first `k` snapshots.
fn upto(run: &RunData, k: usize) -> RunData {
    let mut r = run.clone();
    for e in &mut r.ends {
        e.snaps.truncate(k);
    }
    r
}

/// Feeds `run` to a [`Live`] snapshot by snapshot: the lines each step printed, then the rest.
fn feed(run: &RunData, per_host: bool) -> (String, Vec<String>) {
    let mut live = Live::new(run, per_host);
    let head = live.head(run);
    let running = vec![false; run.ends.len()];
    let n = run.ends.iter().map(|e| e.snaps.len()).max().unwrap_or(0);
    let mut steps: Vec<String> = (0..=n)
        .map(|k| live.lines(&upto(run, k), &running))
        .collect();
    steps.push(live.lines(run, &vec![true; run.ends.len()]));
    (head, steps)
}

#[test]
fn live_lines_come_as_intervals_close_and_add_up_to_the_table() {
    let run = fake::run_data(1, false);
    let (head, steps) = feed(&run, false);
    // Snapshot k closes interval k (the one after the window's end closes none).
    let counts: Vec<usize> = steps.iter().map(|s| s.lines().count()).collect();
    assert_eq!(counts, vec![0, 0, 1, 1, 1, 1, 0, 0]);
    let report = fathom_report::build(&run);
    let live = format!("{head}{}", steps.concat());
    let mut whole = live.into_bytes();
    whole.extend(table::rest(&report));
    assert_eq!(
        String::from_utf8(whole).unwrap(),
        String::from_utf8(table::render(&report)).unwrap()
    );
}

/// The fake run's 4 forward flows split over two client hosts, h2 (flows 0, 1) and h3 (2, 3).
fn two_clients() -> RunData {
    let mut run = fake::run_data(4, false);
    let mut h2 = run.ends[1].clone();
    h2.name = "h2".into();
    h2.in_process = false;
    let mut h3 = h2.clone();
    h3.name = "h3".into();
    h2.ids = vec![0, 1];
    h3.ids = vec![2, 3];
    for s in &mut h2.snaps {
        s.flows.truncate(2);
    }
    for s in &mut h3.snaps {
        s.flows.drain(..2);
    }
    run.ends.truncate(1);
    run.ends.extend([h2, h3]);
    run
}

#[test]
fn per_host_lines_follow_each_aggregate_line() {
    let run = two_clients();
    let (head, steps) = feed(&run, true);
    insta::assert_snapshot!("live_per_host", format!("{head}{}", steps.concat()));
    let (_, plain) = feed(&run, false);
    assert!(plain.concat().lines().all(|l| !l.contains("h2")));
}
