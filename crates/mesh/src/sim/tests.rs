//! The simulation's invariants at a size the suite can afford: never two exclusive tests (nor
//! an exclusive and a normal one) on a member at once, skips bounded, no self tests, holders
//! that vanish freed at their deadlines, members down probed with back-off.

use super::*;
use crate::class::Class;
use crate::spec::{Targets, TestSpec};

const S: u64 = 1_000_000_000;

/// The mix: rr every 30 s to the ring peers, a background UDP loss probe every 60 s,
/// a 5 s stream every 15 min by rotation (shorter periods here, to exercise the slots).
fn mix(stream_every: u64) -> Vec<TestSpec> {
    let rr = TestSpec::defaults("rr", "rr", 30 * S, S, S / 2);
    let mut udp = TestSpec::defaults("loss", "udp", 60 * S, S, S / 2);
    udp.class = Class::Background;
    udp.targets = Targets::Ring;
    let stream = TestSpec::defaults("stream", "stream", stream_every, 5 * S, S);
    vec![rr, udp, stream]
}

fn setting(members: usize, hours: f64, stream_every: u64) -> Setting {
    Setting {
        members,
        span_ns: (hours * 3600.0) as u64 * S,
        tests: mix(stream_every),
        peers: 5,
        seed: 7,
        busy_share: 0.9,
        vanish_every: None,
        outages: Vec::new(),
    }
}

#[test]
fn the_class_rules_hold_skips_are_bounded_and_nobody_tests_itself() {
    let out = run(&setting(60, 2.0, 120 * S));
    assert_eq!(out.overlaps, 0, "{}", out.render());
    assert_eq!(out.self_tests, 0);
    let stream = &out.tests[2];
    assert!(stream.started > 0);
    let share = stream.skipped as f64 / (stream.started + stream.skipped) as f64;
    assert!(share < 0.05, "{}", out.render());
    for t in &out.tests {
        assert!(t.max_lag_ms <= slip_ms(&t.name), "{}", out.render());
    }
    // Each round is a permutation: every member is in two exclusive tests a period at most
    // by the schedule (2 x 30 an hour), fewer when some are skipped.
    assert!(out.exclusive_per_member_hour.1 <= 60.0, "{}", out.render());
    assert!(out.exclusive_per_member_hour.0 > 50.0, "{}", out.render());
    // No herd: the busiest second holds a few times the mean, not a synchronised wave.
    assert!(
        f64::from(out.starts_per_second.1) < 8.0 * out.starts_per_second.0.max(1.0),
        "{}",
        out.render()
    );
}

/// The most a test of the mix may start late: its slip.
fn slip_ms(name: &str) -> f64 {
    let t = mix(120 * S).into_iter().find(|t| t.name == name).unwrap();
    t.slip_ns as f64 / 1e6
}

#[test]
fn holders_that_vanish_free_their_slots_at_the_deadline() {
    let mut set = setting(30, 1.0, 60 * S);
    set.vanish_every = Some(5);
    let out = run(&set);
    assert_eq!(out.overlaps, 0, "{}", out.render());
    let stream = &out.tests[2];
    let share = stream.skipped as f64 / (stream.started + stream.skipped) as f64;
    // A fifth of the slots last their whole hold, so more waits end in skips, but the mesh
    // never stalls: most instances still run.
    assert!(share < 0.5, "{}", out.render());
    assert!(stream.started > 30 * 55 / 2, "{}", out.render());
}

#[test]
fn a_member_down_is_skipped_and_probed_with_back_off() {
    let mut set = setting(20, 1.0, 300 * S);
    set.outages = vec![(3, 0, 1800 * S)];
    let out = run(&set);
    assert!(out.tests[0].down > 0, "{}", out.render());
    // 30 minutes down: 1, 2, 4, ... 60 s waits, about 35 probes, not one per due test.
    assert!((20..=45).contains(&out.probes), "{}", out.render());
    assert_eq!(out.overlaps, 0);
}
