//! The wording of the terminal table and the HTML page on the fake report: counts agree with
//! their nouns, a file copy is a file, and both outputs count a multi-host test's flows alike.

mod common;
mod series_fixture;

use common::report;
use fathom_report::html::{render, Page, Section};
use fathom_report::table::header;

fn page(sections: Vec<Section>) -> String {
    render(&Page {
        title: "t".into(),
        subtitle: String::new(),
        findings: Vec::new(),
        sections,
        environment: Vec::new(),
    })
}

#[test]
fn a_file_copy_is_a_file_not_bytes_per_direction() {
    let mut r = report(1, false);
    r.test.kind = "file".into();
    r.test.duration_s = None;
    r.test.bytes = Some(200 << 20);
    let h = header(&r);
    assert!(
        h.contains("1 flow forward, a 200 MB file, ") && !h.contains("per direction"),
        "{h}"
    );
    let html = page(vec![Section::Run {
        title: "copy".into(),
        report: r,
        about: Vec::new(),
    }]);
    assert!(html.contains("a 200 MB file") && !html.contains("per direction"));
}

#[test]
fn the_page_counts_a_multi_host_tests_flows_as_the_terminal_does() {
    let mut r = report(4, false);
    r.test.clients = vec!["h2".into(), "h3".into()];
    let said = "8 flows (4 from each of 2 clients)";
    assert!(header(&r).contains(said), "{}", header(&r));
    let html = page(vec![Section::Run {
        title: "rr".into(),
        report: r,
        about: Vec::new(),
    }]);
    assert!(html.contains(said), "the page says what the terminal says");
    assert!(!html.contains(", 4 flows"), "not -P alone");
}

#[test]
fn one_run_a_point_is_not_up_to_1_iterations() {
    let mut s = series_fixture::stream_sweep();
    s.iterations = 1;
    s.min_iterations = 1;
    let html = page(vec![Section::Series {
        title: "sweep".into(),
        series: s,
        x_axis: "buffer".into(),
        more_charts: Vec::new(),
    }]);
    assert!(html.contains("; one run per point"), "{html}");
    assert!(!html.contains("up to 1 iterations"));
}
