//! Figures that do not exist for a kind are not shown as if they did: request/response has no
//! meaningful data-segments-per-ACK (its ACKs ride on the answers, so the ratio was about the
//! transaction count), and crr and UDP flows have no RTT or congestion window.

use fathom_proto::plan::{KindId, KindPlan, RrOptions};
use fathom_report::{build, fake, table};

fn report(kind: KindId) -> fathom_report::Report {
    let mut run = fake::run_data(2, false);
    let rr = RrOptions {
        request: 1,
        response: 1,
        burst: 1,
        rate: None,
        udp_timeout_ns: 2_000_000,
        test_drop_every: None,
    };
    run.plan.kind = KindPlan::request_response(kind, rr).unwrap_or_default();
    build(&run)
}

#[test]
fn request_response_has_no_segments_per_ack() {
    for kind in [KindId::Rr, KindId::Crr, KindId::UdpRr] {
        let r = report(kind);
        assert_eq!(r.summary.tcp.data_segs_per_ack, 0.0, "{kind:?}");
        assert!(
            r.flows.iter().all(|f| f.data_segs_per_ack == 0.0),
            "{kind:?}"
        );
        let text = String::from_utf8(table::render(&r)).unwrap();
        assert!(!text.contains("segs per ack"), "{kind:?}: {text}");
    }
    assert!(report(KindId::Stream).summary.tcp.data_segs_per_ack > 0.0);
}

#[test]
fn crr_and_udp_flow_rows_say_rtt_and_cwnd_do_not_apply() {
    for (kind, shown) in [
        (KindId::Rr, true),
        (KindId::Crr, false),
        (KindId::UdpRr, false),
    ] {
        let text = String::from_utf8(table::render(&report(kind))).unwrap();
        let header = text
            .lines()
            .position(|l| l.starts_with("flow dir"))
            .expect("flow table");
        let row = text.lines().nth(header + 1).unwrap();
        assert_eq!(!row.contains('—'), shown, "{kind:?}: {row}");
    }
}
