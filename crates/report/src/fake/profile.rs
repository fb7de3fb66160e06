//! The fake run as a profile group, for golden tests of the profile section: one flow whose
//! program asks and answers in datagrams, with every count, time and loss exact.

use super::kinds::latencies;
use crate::run::{Role, RunData};
use fathom_proto::plan::KindPlan;
use fathom_proto::profile::{
    FlowOp, Op, OpCounters, ProfileCounters, Program, Repeat, Size, Transaction, PROFILE_OPS,
};
use fathom_proto::sample::FlowKindCounters;

/// Iterations the connecting end completes per second.
pub const ITERATIONS_PER_S: u64 = 1000;
/// Requests per second that reach the agent (5 a second are lost on the way).
pub const ANSWERED_PER_S: u64 = 995;
/// Answers per second that reach the connecting end (2 a second are lost on the way back).
pub const ANSWERS_READ_PER_S: u64 = 993;
/// Bytes of every datagram.
pub const DATAGRAM: u64 = 64;

/// The fake run (one flow) as a profile group: a connect, then 64-byte `sendto` and `recv`
/// for the window, then a disconnect. The exchange runs from 0 to 4 s; the disconnect comes
/// in the last snapshot. Each operation's times (and each iteration's) are 100 values from
/// 40 µs up, shifted per operation and per snapshot.
pub fn profile() -> RunData {
    let mut run = super::run_data(1, false);
    let datagram = Size::Fixed(DATAGRAM as u32);
    run.plan.kind = KindPlan::Profile(Program {
        transactions: vec![
            once(Op::Connect),
            Transaction {
                repeat: Repeat::DurationMs(3000),
                rate: None,
                barrier: false,
                ops: vec![
                    flow_op(Op::SendTo(datagram.clone())),
                    flow_op(Op::Recv(datagram)),
                ],
            },
            once(Op::Disconnect),
        ],
        seed: 1,
    });
    for end in &mut run.ends {
        let client = end.role == Role::Client;
        let last = end.snaps.len().saturating_sub(1);
        for (k, snap) in end.snaps.iter_mut().enumerate() {
            let s = (snap.t_ns as u64 / 1_000_000).min(4000) / 1000;
            let ops = counts(client, s, k > 0, k == last);
            let f = &mut snap.flows[0];
            let (sent, read) = if client {
                (ITERATIONS_PER_S, ANSWERS_READ_PER_S)
            } else {
                (ANSWERED_PER_S, ANSWERED_PER_S)
            };
            (f.sent, f.received) = (DATAGRAM * sent * s, DATAGRAM * read * s);
            f.transactions = if client {
                ITERATIONS_PER_S
            } else {
                ANSWERED_PER_S
            } * s;
            f.tcp = None;
            f.kind = Some(Box::new(FlowKindCounters::Profile(ProfileCounters { ops })));
            if k > 0 {
                snap.op_latency = op_times(k, k == last, if client { 0 } else { 100 });
                snap.latency = (client && k < last).then(|| latencies(k as u64)).flatten();
            }
        }
    }
    run
}

/// A transaction of one operation, run once.
fn once(op: Op) -> Transaction {
    Transaction {
        repeat: Repeat::Iterations(1),
        rate: None,
        barrier: false,
        ops: vec![flow_op(op)],
    }
}

fn flow_op(op: Op) -> FlowOp {
    FlowOp {
        op,
        count: 1,
        can_fail: false,
    }
}

/// One end's counts per operation after `s` seconds of exchange: connected once `connected`,
/// disconnected once `closed`; the connecting end's `recv`s that timed out are failures.
fn counts(client: bool, s: u64, connected: bool, closed: bool) -> [OpCounters; PROFILE_OPS] {
    let mut ops = [OpCounters::default(); PROFILE_OPS];
    let data = |count: u64, ns_each: u64, failed: u64| OpCounters {
        count,
        bytes: count * DATAGRAM,
        ns: count * ns_each,
        failed,
    };
    let once = |on: bool, ns: u64| OpCounters {
        count: u64::from(on),
        ns: if on { ns } else { 0 },
        ..OpCounters::default()
    };
    ops[0] = once(connected, if client { 50_000 } else { 20_000 });
    if client {
        ops[1] = data(ITERATIONS_PER_S * s, 4_000, 0);
        let timed_out = (ITERATIONS_PER_S - ANSWERS_READ_PER_S) * s;
        ops[2] = data(ANSWERS_READ_PER_S * s, 60_000, timed_out);
    } else {
        ops[1] = data(ANSWERED_PER_S * s, 30_000, 0);
        ops[2] = data(ANSWERED_PER_S * s, 3_000, 0);
    }
    ops[3] = once(closed, 10_000);
    ops
}

/// The operations' times since the snapshot before snapshot `k`, shifted by `shift` µs: the
/// connect's in the first, the disconnect's alone in the `last`, the datagrams' in every other.
fn op_times(k: usize, last: bool, shift: usize) -> Vec<Vec<u8>> {
    let moved = [k == 1, !last, !last, last];
    moved
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            m.then(|| latencies((k + 10 * i + shift) as u64))
                .flatten()
                .unwrap_or_default()
        })
        .collect()
}
