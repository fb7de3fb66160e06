//! OpenMetrics end to end on loopback: promtool checks a real scrape of `fathom serve --metrics`
//! and of every family fed through the library, and a real Prometheus (started here on a free
//! port) scrapes both as OpenMetrics and answers PromQL with the expected series, and every
//! query of the Grafana dashboard with some.

mod common;
mod metrics_common;
use common::*;
use metrics_common::*;
use std::net::SocketAddr;

/// An agent with `--metrics 127.0.0.1:0` that served one rr test: it and its metrics address.
fn agent_that_served_one_test() -> (Agent, SocketAddr) {
    let mut agent = Agent::start(&["--metrics", "127.0.0.1:0"]);
    let addr = metrics_addr(&agent.next_log_line());
    run_ok(&["rr", &agent.target(), "-n", "100"], 60);
    (agent, addr)
}

#[test]
fn promtool_passes_a_scrape_of_fathom_serve_metrics() {
    if !have("promtool") {
        return;
    }
    let (_agent, addr) = agent_that_served_one_test();
    let text = scrape(addr);
    assert!(
        text.lines()
            .any(|l| l == "fathom_agent_tests_served_total 1"),
        "{text}"
    );
    let (ok, said) = promtool(&["check", "metrics"], &text);
    assert!(ok, "promtool check metrics: {said}\n{text}");
}

#[test]
fn promtool_passes_a_scrape_of_every_family() {
    if !have("promtool") {
        return;
    }
    let text = scrape(serve_here(fed()));
    assert!(
        text.contains("fathom_mesh_rr_latency_seconds_bucket"),
        "{text}"
    );
    let (ok, said) = promtool(&["check", "metrics"], &text);
    assert!(ok, "promtool check metrics: {said}\n{text}");
}

#[test]
fn a_real_prometheus_scrapes_openmetrics_and_answers_promql() {
    if !have("prometheus") {
        return;
    }
    let (_agent, agent_metrics) = agent_that_served_one_test();
    let fed_metrics = serve_here(fed());
    let p = Prometheus::start(&[("agent", agent_metrics), ("mesh", fed_metrics)], None);
    let up = p.wait_for("up == 1", 2);
    assert_eq!(up.len(), 2, "{up:?}");
    let served = p.wait_for(r#"fathom_agent_tests_served_total{host="agent"} == 1"#, 1);
    assert_eq!(served[0]["value"][1], "1", "{served:?}");
    let pairs = p.wait_for("fathom_mesh_rr_latency_seconds_count", 1);
    assert_eq!(
        pairs[0]["metric"]["peer"], "h2",
        "only the sampled peer: {pairs:?}"
    );
    assert_eq!(pairs[0]["value"][1], "100", "{pairs:?}");
    let each = p.wait_for("fathom_mesh_source_rr_latency_seconds_count", 1);
    assert_eq!(each[0]["value"][1], "200", "both peers: {each:?}");
    let loss = p.query("fathom_mesh_datagrams_sent_total - fathom_mesh_datagrams_received_total");
    assert_eq!(loss[0]["value"][1], "20", "{loss:?}");
    let alerts = p.query("fathom_mesh_alert == 1");
    assert_eq!(
        alerts.len(),
        2,
        "an unsampled peer's raised alert too: {alerts:?}"
    );
    for query in dashboard_queries() {
        // Grafana's variables as a user who picked every source would have them.
        let promql = query
            .replace("$source", ".*")
            .replace("$__rate_interval", "1m")
            .replace(
                "label_values(fathom_mesh_tests_total, source)",
                "fathom_mesh_tests_total",
            );
        p.wait_some(&promql);
    }
    let meta = p.api("metadata?metric=fathom_mesh_rr_latency_seconds");
    assert_eq!(
        meta["fathom_mesh_rr_latency_seconds"][0]["unit"], "seconds",
        "read as OpenMetrics (its # UNIT line): {meta}"
    );
}
