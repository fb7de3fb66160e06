//! UDP stream figures that must not mislead. One definition of loss: the datagrams sent in the
//! window that never arrived (the receiver's sequence gaps can differ by the few at the window's
//! edges); the summary, each flow and the "missing" account all show the one number.

use fathom_proto::plan::KindId;
use fathom_proto::udp::{UdpCounters, UdpOptions};
use fathom_report::{build, fake, table};

/// The fake run as a UDP stream: the sender sends 1,000 datagrams a second, the receiver misses
/// 10 of them a second but counts 11 sequence gaps a second.
fn run() -> fathom_report::RunData {
    let mut run = fake::run_data(1, false);
    run.plan.kind = KindId::Udp;
    run.plan.udp = Some(UdpOptions {
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
            snap.flows[0].udp = Some(match sends {
                true => UdpCounters {
                    datagrams_sent: 1000 * k,
                    ..UdpCounters::default()
                },
                false => UdpCounters {
                    datagrams: 990 * k,
                    lost: 11 * k,
                    ..UdpCounters::default()
                },
            });
        }
    }
    run
}

#[test]
fn lost_is_one_number_in_the_summary_the_flows_and_the_missing_account() {
    let r = build(&run());
    let u = r.summary.udp.as_ref().expect("udp summary");
    assert_eq!(u.missing.datagrams, 30, "{u:?}");
    assert_eq!(u.lost, Some(30), "{u:?}");
    assert_eq!(r.flows[0].udp.as_ref().unwrap().lost, Some(30));
    let text = String::from_utf8(table::render(&r)).unwrap();
    let lost = text
        .lines()
        .find(|l| l.trim_start().starts_with("lost "))
        .unwrap_or("");
    assert!(lost.contains(" 30 ("), "{text}");
    assert!(text.contains("30 sent but not received"), "{text}");
}
