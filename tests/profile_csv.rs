//! A profile group's outputs: its CSV, ten columns per flow operation, named the same for
//! every profile, whose interval counts add up to the operation's exact totals at both ends;
//! its table, which never says a buffer of 0 was granted.

use fathom::cli::common::StoreArgs;
use fathom::cli::profile_run::ProfileRunArgs;
use fathom::commands::profile_run::profile_reports;
use fathom_proto::profile::{FlowOp, Op, ProfilePlan, Repeat, Size, Transaction};

mod profile_common;
use profile_common::group;

fn op(op: Op) -> FlowOp {
    profile_common::op(op, 1)
}

/// Two flows, each 5 iterations of a 100-byte write, a 10-byte read and a 30 ms think,
/// sampled every 50 ms (so over several intervals).
fn report() -> fathom_report::Report {
    let group = group(
        "rr",
        2,
        vec![Transaction {
            repeat: Repeat::Iterations(5),
            rate: None,
            barrier: false,
            ops: vec![
                op(Op::Write(Size::Fixed(100))),
                op(Op::Read(Size::Fixed(10))),
                op(Op::Think(Size::Fixed(30_000))),
            ],
        }],
    );
    let plan = ProfilePlan {
        name: "csv".into(),
        groups: vec![group],
    };
    let args = ProfileRunArgs {
        store: StoreArgs {
            path: None,
            no_store: true,
        },
        interval: Some(50_000_000),
        ..ProfileRunArgs::default()
    };
    let mut runs = profile_reports(&plan, &args).unwrap_or_else(|e| panic!("{e:?}"));
    let r = runs.remove(0).report;
    assert_eq!(r.error, None);
    r
}

#[test]
fn each_flowop_has_stable_columns_whose_rows_add_up_to_its_totals() {
    let r = report();
    let text = String::from_utf8(fathom_report::csv::render(&r)).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|row| row.len() == header.len()));
    assert_eq!(header.len(), 13 + 12 * 10);
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let sum = |name: &str| -> u64 {
        let c = col(name);
        rows.iter()
            .filter(|row| row[2] == "sum")
            .map(|row| row[c].parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(sum("flowop1_client_count"), 10);
    assert_eq!(sum("flowop1_client_bytes"), 1_000);
    assert_eq!(sum("flowop1_server_count"), 10, "the agent's reads");
    assert_eq!(sum("flowop1_server_bytes"), 1_000);
    assert_eq!(sum("flowop2_client_bytes"), 100);
    assert_eq!(sum("flowop2_server_bytes"), 100);
    assert_eq!(sum("flowop2_client_failed"), 0);
    let p50 = col("flowop1_client_p50_us");
    assert!(
        rows.iter()
            .any(|row| row[2] == "sum" && row[p50].parse::<f64>().is_ok_and(|v| v > 0.0)),
        "an interval in which writes completed has their time"
    );
    assert_eq!(sum("flowop3_client_count"), 10, "the thinks");
    assert_eq!(sum("flowop3_server_count"), 0, "a mirror does not think");
    let fourth = col("flowop4_client_count");
    assert!(
        rows.iter()
            .all(|row| row[fourth..].iter().all(|c| c.is_empty())),
        "the program has three flowops"
    );
    let sums = rows.iter().filter(|row| row[2] == "sum").count();
    assert!(sums > 1, "several intervals: {sums}");
    let summary = r.summary.profile().expect("a profile summary");
    assert_eq!(summary.ops[0].client.count, 10);
}

#[test]
fn the_table_never_says_a_buffer_of_zero_was_granted() {
    let r = report();
    let text = String::from_utf8(fathom_report::table::render(&r)).unwrap();
    assert!(text.contains("flowop 1"), "{text}");
    let b = &r.summary.buffers;
    if b.effective_send == 0 && b.effective_recv == 0 {
        assert!(!text.contains("granted"), "no buffer lines: {text}");
    }
    assert!(!text.contains(" 0 B granted"), "{text}");
}
