//! What ships beside the metrics: the Prometheus alert rules (deploy/prometheus, checked and
//! unit-tested by promtool), the Grafana dashboard (deploy/grafana) and docs/metrics.md, each
//! naming only metrics the registry exports, and every family documented.

mod metrics_common;
use metrics_common::*;

const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/deploy/prometheus/fathom-mesh-rules.yml"
);
const RULE_TESTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/deploy/prometheus/fathom-mesh-rules.test.yml"
);

#[test]
fn promtool_checks_the_rules_and_runs_their_unit_tests() {
    if !have("promtool") {
        return;
    }
    let (ok, said) = promtool(&["check", "rules", RULES], "");
    assert!(
        ok && said.contains("SUCCESS"),
        "promtool check rules: {said}"
    );
    let (ok, said) = promtool(&["test", "rules", RULE_TESTS], "");
    assert!(
        ok && said.contains("SUCCESS"),
        "promtool test rules: {said}"
    );
}

#[test]
fn the_dashboard_and_the_rules_read_only_exported_metrics() {
    let exported = exported_samples();
    let queries = dashboard_queries();
    assert!(queries.len() >= 10, "{queries:?}");
    let rules = std::fs::read_to_string(RULES).unwrap();
    for (what, text) in queries
        .iter()
        .map(|q| ("the dashboard", q.as_str()))
        .chain([("the rules", rules.as_str())])
    {
        let read = metrics_read(text);
        assert!(!read.is_empty(), "{what}: {text}");
        for name in read {
            assert!(
                exported.contains(&name),
                "{what} reads {name}, which the registry does not export: {text}"
            );
        }
    }
}

#[test]
fn every_exported_family_is_documented() {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/metrics.md");
    let docs = std::fs::read_to_string(docs).unwrap();
    let text = fed().encode();
    let families: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert!(families.len() >= 18, "{families:?}");
    for family in families {
        assert!(
            docs.contains(&format!("`{family}`")),
            "docs/metrics.md does not describe {family}"
        );
    }
}
