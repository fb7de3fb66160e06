//! Profile figures: each end's bytes and iterations from its last snapshot (a profile's counts
//! are exact over the whole program), the iteration latency from the connecting ends'
//! histograms, and every flow operation's counts summed over the flows.

use super::model::{OpFigures, ProfileEnd, ProfileOp, ProfileSummary};
use super::responsiveness::trimmed_mean;
use crate::model::{KindSummary, Summary};
use crate::run::{Role, View};
use crate::sections::rr::figures::{empty, latency, merge_into};
use fathom_proto::plan::KindPlan;
use fathom_proto::profile::Op;
use fathom_proto::profile::{OpCounters, ProfileCounters, PROFILE_OPS};
use fathom_proto::sample::Snapshot;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// Fills `summary.profile`.
pub fn fill(v: &View<'_>, summary: &mut Summary) {
    let KindPlan::Profile(program) = &v.run.plan.kind else {
        return;
    };
    let (client, client_ops) = end(v, Role::Client);
    let (server, server_ops) = end(v, Role::Server);
    let (client_times, server_times) = (op_times(v, Role::Client), op_times(v, Role::Server));
    let mut hist = empty();
    for e in v.run.ends.iter().filter(|e| e.role == Role::Client) {
        merge_into(&mut hist, &e.snaps);
    }
    let ops = program
        .transactions
        .iter()
        .enumerate()
        .flat_map(|(t, tx)| tx.ops.iter().map(move |f| (t + 1, &f.op)))
        .take(PROFILE_OPS)
        .enumerate()
        .map(|(i, (transaction, op))| ProfileOp {
            transaction,
            name: op.name().into(),
            client: figures(client_ops[i], client_times.get(i)),
            server: figures(server_ops[i], server_times.get(i)),
            lost: lost(op, client_ops[i].count, server_ops[i].count),
        })
        .collect();
    summary.section = Some(KindSummary::Profile(ProfileSummary {
        iterations: client.iterations,
        iterations_per_second: match summary.seconds {
            s if s > 0.0 => client.iterations as f64 / s,
            _ => 0.0,
        },
        client,
        server,
        latency_us: latency(&hist),
        ops,
        transactions: super::phases::transactions(v, program),
    }));
}

/// The totals of every end in `role` from its last snapshot, and its counts per operation.
fn end(v: &View<'_>, role: Role) -> (ProfileEnd, [OpCounters; PROFILE_OPS]) {
    let mut total = ProfileEnd::default();
    let mut ops = [OpCounters::default(); PROFILE_OPS];
    let lasts = v
        .run
        .ends
        .iter()
        .filter(|e| e.role == role)
        .filter_map(|e| e.snaps.last());
    for flow in lasts.flat_map(|s: &Snapshot| &s.flows) {
        total.sent += flow.sent;
        total.received += flow.received;
        total.iterations += flow.transactions;
        for (o, f) in ops
            .iter_mut()
            .zip(flow.counters::<ProfileCounters>().unwrap_or_default().ops)
        {
            o.count += f.count;
            o.bytes += f.bytes;
            o.ns += f.ns;
            o.failed += f.failed;
        }
    }
    (total, ops)
}

/// Datagrams of a datagram operation sent by one end and never received by the other (the
/// connecting end sends a `sendto`'s, the agent a `recv`'s); none for other operations.
fn lost(op: &Op, client: u64, server: u64) -> Option<u64> {
    match op {
        Op::SendTo(_) => Some(client.saturating_sub(server)),
        Op::Recv(_) => Some(server.saturating_sub(client)),
        _ => None,
    }
}

/// Each flow operation's times over the whole test at every end in `role`, merged.
fn op_times(v: &View<'_>, role: Role) -> Vec<Histogram<u64>> {
    let mut hists: Vec<Histogram<u64>> = (0..PROFILE_OPS).map(|_| empty()).collect();
    let snaps = v
        .run
        .ends
        .iter()
        .filter(|e| e.role == role)
        .flat_map(|e| &e.snaps);
    for s in snaps {
        add_op_times(&mut hists, s);
    }
    hists
}

/// Adds the flow operations' times `s` carries (since the snapshot before it) to `hists`, one
/// per operation in program order.
pub fn add_op_times(hists: &mut [Histogram<u64>], s: &Snapshot) {
    for (h, bytes) in hists.iter_mut().zip(&s.op_latency) {
        if let Ok(d) = Deserializer::new().deserialize::<u64, _>(&mut &bytes[..]) {
            let _ = h.add(&d);
        }
    }
}

fn figures(o: OpCounters, times: Option<&Histogram<u64>>) -> OpFigures {
    OpFigures {
        latency_us: times.and_then(latency),
        trimmed_mean_us: times.and_then(trimmed_mean).map(|ns| ns / 1e3),
        count: o.count,
        bytes: o.bytes,
        failed: o.failed,
        mean_us: match o.count {
            0 => 0.0,
            n => o.ns as f64 / n as f64 / 1e3,
        },
    }
}
