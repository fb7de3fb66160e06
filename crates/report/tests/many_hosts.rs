//! The text table of a multi-host test: the header counts every client's flows, and the
//! per-host rows of a request/response test show transactions/s, not a throughput.

mod common;

use common::report;
use fathom_report::model::{HostResult, RrSummary};
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
    r.summary.rr = Some(RrSummary::default());
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
    assert_eq!(g.bytes, r.summary.total_bytes_received);
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
