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
