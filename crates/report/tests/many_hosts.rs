//! The text table of a multi-host test: the header counts every client's flows, and the
//! per-host rows of a request/response test show transactions/s, not a throughput.

mod common;

use common::report;
use fathom_report::model::{HostResult, KindSummary, RrSummary};
use fathom_report::{table, Report};

/// The fake run as if five clients had run `-P 2` each against a server.
fn five_clients() -> Report {
    let mut r = report(1, false);
    r.test.parallel = 2;
    r.test.clients = (2..=6).map(|i| format!("h{i}")).collect();
    let host = |name: String, role: &str| HostResult {
        name,
        role: role.into(),
        ..HostResult::default()
    };
    r.hosts = std::iter::once(host("h1".into(), "server"))
        .chain(r.test.clients.iter().map(|c| host(c.clone(), "client")))
        .collect();
    r
}

fn text(r: &Report) -> String {
    String::from_utf8(table::render(r)).expect("UTF-8")
}

#[test]
fn the_header_counts_the_flows_of_every_client() {
    let t = text(&five_clients());
    let header = t.lines().next().unwrap();
    assert!(
        header.contains(": 10 flows (2 from each of 5 clients) forward"),
        "{header}"
    );
}

#[test]
fn request_response_hosts_show_transactions_per_second() {
    let mut r = five_clients();
    r.summary.section = Some(KindSummary::Rr(RrSummary::default()));
    for (i, h) in r.hosts.iter_mut().enumerate() {
        h.transactions_per_second = Some(1000.0 * (i + 1) as f64);
        h.bits_per_second = 8000.0;
    }
    let t = text(&r);
    let rows: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with("host "))
        .take(7)
        .collect();
    assert!(rows[0].contains("tx/s"), "{t}");
    assert!(
        rows[1].starts_with("h1") && rows[1].contains("1000/s"),
        "{t}"
    );
    assert!(
        rows[6].starts_with("h6") && rows[6].contains("6000/s"),
        "{t}"
    );
    assert!(rows.iter().all(|l| !l.contains("bit/s")), "{t}");
}

#[test]
fn a_grouped_client_gets_a_group_line_and_its_bytes() {
    let mut run = fathom_report::fake::run_data(2, false);
    run.ends[1].group = Some("rack1".into());
    let r = fathom_report::build(&run);
    assert_eq!(r.hosts[1].group.as_deref(), Some("rack1"));
    assert_eq!(r.hosts[0].group, None);
    let [g] = r.groups.as_slice() else {
        panic!("one group: {:?}", r.groups)
    };
    assert_eq!((g.name.as_str(), g.hosts), ("rack1", 1));
    assert_eq!(g.bytes, r.summary.transfer.total_bytes_received);
    assert!(g.seconds > 0.0 && g.bits_per_second > 0.0);
    let doc = serde_json::to_value(&r).unwrap();
    common::assert_valid(&doc);
    assert_eq!(doc["hosts"][1]["group"], "rack1");
    assert!(doc["hosts"][0].get("group").is_none());
    let t = text(&r);
    let line = t.lines().find(|l| l.starts_with("group rack1")).expect(&t);
    assert!(
        line.contains("  1 host ") && line.contains("total bytes / overall time"),
        "{line}"
    );
    assert!(
        !text(&common::report(1, false)).contains("group "),
        "no groups, no lines"
    );
}

#[test]
fn each_host_shows_the_transactions_of_its_own_flows() {
    let r = fathom_report::build(&fathom_report::fake::kinds::request_response(
        fathom_proto::plan::KindId::Rr,
        2,
    ));
    let summary = r.summary.rr().expect("rr summary").transactions_per_second;
    assert!((summary - 2000.0).abs() < 1e-6, "{summary}");
    for h in &r.hosts {
        let tps = h
            .transactions_per_second
            .expect("an rr host has transactions/s");
        assert!((tps - 2000.0).abs() < 1e-6, "{}: {tps}", h.name);
        assert!(tps.is_sign_positive());
    }
    let doc = serde_json::to_string(&r).unwrap();
    assert!(!doc.contains("-0.0"), "{doc}");
    let mut r = r;
    r.hosts.push(HostResult {
        name: "h9".into(),
        role: "client".into(),
        transactions_per_second: Some(-0.0),
        ..HostResult::default()
    });
    let t = text(&r);
    assert!(!t.contains("-0/s"), "{t}");
}

#[test]
fn a_lab_forwarders_cpu_is_shown_apart() {
    let mut r = report(1, false);
    r.wan.push(fathom_report::model::WanLinkResult {
        name: "h1-h2".into(),
        ends: ["h1".into(), "h2".into()],
        forwarder_cpu_s: Some(3.5),
        ..Default::default()
    });
    let t = text(&r);
    let line = t
        .lines()
        .find(|l| l.contains("its forwarder used"))
        .unwrap_or_else(|| panic!("{t}"));
    // 3.5 s over the test, the window holding 330 of the 385 MB received: 3.00 s in 3 s.
    assert!(
        line.contains("used 3.00 CPU-s in the window (100.0% of a CPU)"),
        "{line}"
    );
    let doc = serde_json::to_value(&r).unwrap();
    assert_eq!(doc["wan"][0]["forwarder_cpu_s"], 3.5);
    common::assert_valid(&doc);
}
