//! UDP stream figures that must not mislead. One definition of loss: the datagrams sent in the
//! window that never arrived (the receiver's sequence gaps can differ by the few at the window's
//! edges); the summary, each flow and the "missing" account all show the one number. And a GSO
//! rate made where no device cut the super-packets says so.

use fathom_proto::plan::KindPlan;
use fathom_proto::sample::FlowKindCounters;
use fathom_proto::udp::{UdpCounters, UdpOptions};
use fathom_report::{build, fake, table};

/// The fake run as a UDP stream: the sender sends 1,000 datagrams a second, the receiver misses
/// 10 of them a second but counts 11 sequence gaps a second.
fn run() -> fathom_report::RunData {
    let mut run = fake::run_data(1, false);
    run.plan.kind = KindPlan::Udp(UdpOptions {
        size: 1472,
        batch: 64,
        rate_bps: None,
        pps: None,
        blast: false,
        faults: None,
        gso: true,
    });
    for (end, sends) in run.ends.iter_mut().zip([false, true]) {
        for (k, snap) in end.snaps.iter_mut().enumerate() {
            let k = k as u64;
            snap.flows[0].kind = Some(Box::new(FlowKindCounters::Udp(match sends {
                true => UdpCounters {
                    datagrams_sent: 1000 * k,
                    ..UdpCounters::default()
                },
                false => UdpCounters {
                    datagrams: 990 * k,
                    lost: 11 * k,
                    ..UdpCounters::default()
                },
            })));
        }
    }
    run
}

#[test]
fn lost_is_one_number_in_the_summary_the_flows_and_the_missing_account() {
    let r = build(&run());
    let u = r.summary.udp().expect("udp summary");
    assert_eq!(u.missing.datagrams, 30, "{u:?}");
    assert_eq!(u.lost, Some(30), "{u:?}");
    assert_eq!(r.flows[0].udp().unwrap().lost, Some(30));
    let text = String::from_utf8(table::render(&r)).unwrap();
    let lost = text
        .lines()
        .find(|l| l.trim_start().starts_with("lost "))
        .unwrap_or("");
    assert!(lost.contains(" 30 ("), "{text}");
    assert!(text.contains("30 sent but not received"), "{text}");
}

fn gso_note(r: &fathom_report::Report) -> Option<&String> {
    r.warnings.iter().find(|w| w.starts_with("--gso:"))
}

#[test]
fn a_gso_rate_where_no_device_cut_the_packets_says_so() {
    let mut run = run();
    let r = build(&run);
    let note = gso_note(&r).expect("a note on an unemulated path");
    assert!(note.contains("a veth pair"), "{note}");
    for end in &mut run.ends {
        for f in &mut end.info.flows {
            f.local = f
                .local
                .replace("192.0.2.1:", "127.0.0.1:")
                .replace("192.0.2.10:", "127.0.0.2:");
            f.peer = f
                .peer
                .replace("192.0.2.1:", "127.0.0.1:")
                .replace("192.0.2.10:", "127.0.0.2:");
        }
    }
    let r = build(&run);
    let note = gso_note(&r).expect("a note on loopback");
    assert!(
        note.contains("on loopback no device cuts GSO's super-packets"),
        "{note}"
    );
    assert!(note.contains("not packets that crossed a wire"), "{note}");
    run.plan.kind.udp_mut().unwrap().gso = false;
    assert_eq!(gso_note(&build(&run)), None);
}
