//! Profiles run end to end on an in-process agent: exact byte and iteration counts at both
//! ends for programs with `iterations`, connection churn, and many threads.

use fathom::cli::common::StoreArgs;
use fathom::cli::profile_run::ProfileRunArgs;
use fathom::commands::profile_run::{profile_reports, GroupRun};
use fathom_proto::profile::{
    FlowOp, Group, Op, ProfilePlan, Program, Protocol, Repeat, Size, Transaction,
};

fn op(op: Op, count: u32) -> FlowOp {
    FlowOp {
        op,
        count,
        can_fail: false,
    }
}

fn group(name: &str, threads: u32, transactions: Vec<Transaction>) -> Group {
    Group {
        name: name.into(),
        threads,
        flows_per_thread: 1,
        remote: None,
        protocol: Protocol::Tcp,
        nodelay: true,
        window: None,
        program: Program {
            transactions,
            seed: 7,
        },
    }
}

fn iterations(n: u64, ops: Vec<FlowOp>) -> Transaction {
    Transaction {
        repeat: Repeat::Iterations(n),
        rate: None,
        barrier: false,
        ops,
    }
}

fn run(groups: Vec<Group>) -> Vec<GroupRun> {
    let plan = ProfilePlan {
        name: "test".into(),
        groups,
    };
    let args = ProfileRunArgs {
        store: StoreArgs {
            path: None,
            no_store: true,
        },
        ..ProfileRunArgs::default()
    };
    let runs = profile_reports(&plan, &args).unwrap_or_else(|e| panic!("{e:?}"));
    for r in &runs {
        assert_eq!(r.report.error, None, "group {}", r.group);
    }
    runs
}

#[test]
fn a_stream_program_moves_exactly_its_bytes() {
    let runs = run(vec![group(
        "writer",
        1,
        vec![iterations(
            1,
            vec![op(Op::Write(Size::Fixed(64 << 10)), 100)],
        )],
    )]);
    let s = &runs[0].report.summary;
    assert_eq!(s.total_bytes_sent, 6_553_600);
    assert_eq!(s.total_bytes_received, 6_553_600);
}
