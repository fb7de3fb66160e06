//! Builders shared by the profile tests: flowops, TCP groups, and a profile's groups run on
//! in-process agents without storing, every group checked to have ended without an error.
#![allow(dead_code)]

use fathom::cli::common::StoreArgs;
use fathom::cli::profile_run::ProfileRunArgs;
use fathom::commands::profile_run::{profile_reports, GroupRun};
use fathom_proto::profile::{FlowOp, Group, Op, ProfilePlan, Program, Protocol, Transaction};

/// `op` run `count` times in a row, not allowed to fail.
pub fn op(op: Op, count: u32) -> FlowOp {
    FlowOp {
        op,
        count,
        can_fail: false,
    }
}

/// A TCP group of `threads` threads, one flow each, running `transactions` (seed 7).
pub fn group(name: &str, threads: u32, transactions: Vec<Transaction>) -> Group {
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

/// Runs `groups` as one profile, with intervals of `interval_ns` (the default when `None`),
/// and asserts that every group's test ended without an error.
pub fn run(groups: Vec<Group>, interval_ns: Option<u64>) -> Vec<GroupRun> {
    let plan = ProfilePlan {
        name: "test".into(),
        groups,
    };
    let args = ProfileRunArgs {
        store: StoreArgs {
            path: None,
            no_store: true,
        },
        interval: interval_ns,
        ..ProfileRunArgs::default()
    };
    let runs = profile_reports(&plan, &args).unwrap_or_else(|e| panic!("{e:?}"));
    for r in &runs {
        assert_eq!(r.report.error, None, "group {}", r.group);
    }
    runs
}
