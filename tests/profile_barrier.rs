//! Barriers across a profile's groups: each group is a test of its own, and the k-th barrier
//! of every group opens only once every flow of every group reached it, checked from the
//! groups' recorded start times and interval ends on one wall-clock timeline.

mod profile_common;

use fathom::commands::profile_run::GroupRun;
use fathom_proto::profile::{FlowOp, Group, Op, Repeat, Size, Transaction};
use profile_common::group;

/// How long the slow group thinks before its barrier, µs.
const THINK_US: u32 = 400_000;

/// `op` once.
fn op(op: Op) -> FlowOp {
    profile_common::op(op, 1)
}

fn tx(barrier: bool, ops: Vec<FlowOp>) -> Transaction {
    Transaction {
        repeat: Repeat::Iterations(1),
        rate: None,
        barrier,
        ops,
    }
}

fn run(groups: Vec<Group>) -> Vec<GroupRun> {
    profile_common::run(groups, Some(50_000_000))
}

/// When group `r`'s test ended, in seconds since the Unix epoch (its start plus its last
/// interval's end).
fn ended(r: &GroupRun) -> f64 {
    let last = r.report.intervals.last().map_or(0.0, |i| i.measured_end);
    r.report.test.started_unix_s + last
}

/// Runs two groups, each of `(flows, bytes)`: "slow" thinks THINK_US before its barrier and
/// "fast" only connects; after the barrier each flow writes its group's bytes. Asserts that the
/// fast group ended no sooner than the slow group's think allows; returns [slow, fast].
fn slow_and_fast(slow: (u32, u32), fast: (u32, u32)) -> Vec<GroupRun> {
    let write = |bytes| tx(false, vec![op(Op::Write(Size::Fixed(bytes)))]);
    let thinks = tx(true, vec![op(Op::Think(Size::Fixed(THINK_US)))]);
    let slow = group("slow", slow.0, vec![thinks, write(slow.1)]);
    let fast = group(
        "fast",
        fast.0,
        vec![tx(true, vec![op(Op::Connect)]), write(fast.1)],
    );
    let runs = run(vec![slow, fast]);
    let waited = ended(&runs[1]) - runs[0].report.test.started_unix_s;
    assert!(
        waited >= (THINK_US as f64 / 1e6) * 0.75,
        "the fast group ended {waited:.3} s after the slow one started"
    );
    runs
}

#[test]
fn the_second_transactions_of_two_groups_start_together_after_the_barrier() {
    // The fast group's second transaction can begin only once the slow group's flows ended
    // their think.
    let runs = slow_and_fast((2, 100), (3, 10));
    let (slow, fast) = (&runs[0], &runs[1]);
    assert_eq!(fast.report.summary.transfer.total_bytes_received, 3 * 10);
    assert_eq!(slow.report.summary.transfer.total_bytes_received, 2 * 100);
}

#[test]
fn a_group_with_fewer_barriers_does_not_hold_the_others_at_later_ones() {
    let two = group(
        "two",
        1,
        vec![
            tx(true, vec![op(Op::Write(Size::Fixed(1)))]),
            tx(true, vec![op(Op::Write(Size::Fixed(2)))]),
            tx(false, vec![op(Op::Write(Size::Fixed(4)))]),
        ],
    );
    let one = group(
        "one",
        2,
        vec![tx(true, vec![op(Op::Write(Size::Fixed(8)))])],
    );
    let runs = run(vec![two, one]);
    assert_eq!(runs[0].report.summary.transfer.total_bytes_received, 7);
    assert_eq!(runs[1].report.summary.transfer.total_bytes_received, 16);
}

#[test]
fn the_agents_mirror_waits_at_the_barrier_before_its_next_flowop() {
    // The fast group's flows are connected at the barrier; after it each writes one byte,
    // which its mirror on the agent reads. A mirror that did not wait would start that read at
    // once and time it across the slow group's think.
    let runs = slow_and_fast((1, 1), (2, 1));
    let fast = &runs[1];
    let profile = fast.report.summary.profile().expect("a profile summary");
    let read = profile
        .ops
        .iter()
        .find(|o| o.transaction == 2)
        .expect("the second transaction's write");
    assert_eq!((read.server.count, read.server.bytes), (2, 2));
    let longest_us = read.server.latency_us.as_ref().expect("timed reads").max;
    assert!(
        longest_us < f64::from(THINK_US) / 2.0,
        "the agent's read took {longest_us} µs: its mirror did not wait at the barrier"
    );
    assert_eq!(fast.report.summary.transfer.total_bytes_received, 2);
}
