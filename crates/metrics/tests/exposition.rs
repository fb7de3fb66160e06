//! The exposition text of `MeshMetrics`: which series exist for sampled and unsampled peers,
//! what a departed peer or source leaves behind (nothing), and bounded, escaped labels.

use fathom_metrics::{AgentCounts, MeshMetrics, Outcome, MAX_LABEL};
use std::sync::atomic::Ordering;

/// The sample lines (not metadata) of the OpenMetrics exposition.
fn samples(m: &MeshMetrics) -> Vec<String> {
    m.encode()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The sample lines of family `name` (its `_bucket`, `_sum`, `_count` or `_total` included),
/// sorted.
fn of(m: &MeshMetrics, name: &str) -> Vec<String> {
    samples(m)
        .into_iter()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', '_', ' ']))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn peers(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

#[test]
fn an_empty_registry_is_an_empty_exposition() {
    let m = MeshMetrics::new(10);
    assert_eq!(
        m.encode(),
        "# EOF\n",
        "a family appears with its first series"
    );
}

#[test]
fn every_family_has_its_type_unit_and_one_period_of_help() {
    let m = MeshMetrics::new(10);
    m.set_peers("h1", &peers(&["h2"]));
    m.rr("h1", "h2", "rr", &[(1e-3, 1)]);
    m.datagrams("h1", "h2", "udp", 1, 1);
    m.throughput("h1", "h2", "stream", 1.0, 1.0);
    m.alert("h1", "h2", "rr", true);
    m.outcome("h1", "rr", Outcome::Run);
    m.scheduler_lag("h1", 0.1);
    m.stored("h1", 1.0);
    let text = m.encode();
    for line in [
        "# TYPE fathom_mesh_rr_latency_seconds histogram",
        "# UNIT fathom_mesh_rr_latency_seconds seconds",
        "# TYPE fathom_mesh_datagrams_sent counter",
        "# TYPE fathom_mesh_throughput_bytes_per_second gauge",
        "# UNIT fathom_mesh_throughput_bytes_per_second bytes_per_second",
        "# TYPE fathom_mesh_throughput_timestamp_seconds gauge",
        "# TYPE fathom_mesh_alert gauge",
        "# TYPE fathom_mesh_source_rr_latency_seconds histogram",
        "# TYPE fathom_mesh_tests counter",
        "# TYPE fathom_mesh_scheduler_lag_seconds histogram",
        "# TYPE fathom_mesh_last_stored_timestamp_seconds gauge",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
    }
    assert!(!text.contains("fathom_agent"), "no agent watched: {text}");
    assert!(!text.contains(".."), "help texts end in one period: {text}");
}

#[test]
fn a_sampled_peer_gets_pair_series_and_every_peer_the_aggregate() {
    let m = MeshMetrics::new(10);
    m.set_peers("h1", &peers(&["h2"]));
    m.rr("h1", "h2", "rr", &[(30e-6, 5), (0.002, 1)]);
    m.rr("h1", "h3", "rr", &[(30e-6, 4)]);
    let pair = of(&m, "fathom_mesh_rr_latency_seconds");
    assert!(pair.iter().all(|l| l.contains(r#"peer="h2""#)), "{pair:?}");
    for line in [
        r#"fathom_mesh_rr_latency_seconds_count{source="h1",peer="h2",test="rr"} 6"#,
        r#"fathom_mesh_rr_latency_seconds_bucket{le="0.00002",source="h1",peer="h2",test="rr"} 0"#,
        r#"fathom_mesh_rr_latency_seconds_bucket{le="0.00005",source="h1",peer="h2",test="rr"} 5"#,
        r#"fathom_mesh_rr_latency_seconds_bucket{le="0.002",source="h1",peer="h2",test="rr"} 6"#,
        r#"fathom_mesh_rr_latency_seconds_bucket{le="+Inf",source="h1",peer="h2",test="rr"} 6"#,
    ] {
        assert!(pair.iter().any(|l| l == line), "{line} missing: {pair:?}");
    }
    let each = of(&m, "fathom_mesh_source_rr_latency_seconds");
    let count = r#"fathom_mesh_source_rr_latency_seconds_count{source="h1",test="rr"} 10"#;
    assert!(each.iter().any(|l| l == count), "{each:?}");
    assert!(each.iter().all(|l| !l.contains("peer=")), "{each:?}");
}

#[test]
fn datagrams_and_throughput_go_to_the_pair_and_the_source() {
    let m = MeshMetrics::new(10);
    m.set_peers("h1", &peers(&["h2"]));
    m.datagrams("h1", "h2", "udp", 100, 98);
    m.datagrams("h1", "h2", "udp", 100, 100);
    m.datagrams("h1", "h3", "udp", 50, 40);
    m.throughput("h1", "h2", "stream", 9.5e9, 1_700_000_000.5);
    m.throughput("h1", "h3", "stream", 1e9, 1_700_000_010.0);
    let s = samples(&m);
    for line in [
        r#"fathom_mesh_datagrams_sent_total{source="h1",peer="h2",test="udp"} 200"#,
        r#"fathom_mesh_datagrams_received_total{source="h1",peer="h2",test="udp"} 198"#,
        r#"fathom_mesh_source_datagrams_sent_total{source="h1",test="udp"} 250"#,
        r#"fathom_mesh_source_datagrams_received_total{source="h1",test="udp"} 238"#,
        r#"fathom_mesh_throughput_bytes_per_second{source="h1",peer="h2",test="stream"} 1187500000.0"#,
        r#"fathom_mesh_throughput_timestamp_seconds{source="h1",peer="h2",test="stream"} 1700000000.5"#,
        r#"fathom_mesh_source_throughput_bytes_per_second{source="h1",test="stream"} 125000000.0"#,
        r#"fathom_mesh_source_throughput_timestamp_seconds{source="h1",test="stream"} 1700000010.0"#,
    ] {
        assert!(s.iter().any(|l| l == line), "{line} missing: {s:#?}");
    }
    assert!(s.iter().all(|l| !l.contains(r#"peer="h3""#)), "{s:#?}");
}

#[test]
fn past_k_peers_and_the_source_itself_get_no_pair_series() {
    let m = MeshMetrics::new(2);
    m.set_peers("h1", &peers(&["h1", "h2", "h3", "h4"]));
    for p in ["h1", "h2", "h3", "h4"] {
        m.datagrams("h1", p, "udp", 1, 1);
    }
    let sent = of(&m, "fathom_mesh_datagrams_sent");
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent[0].contains(r#"peer="h2""#) && sent[1].contains(r#"peer="h3""#),
        "{sent:?}"
    );
    let sampled = of(&m, "fathom_mesh_sampled_peers");
    assert_eq!(sampled, [r#"fathom_mesh_sampled_peers{source="h1"} 2"#]);
}

#[test]
fn a_departed_peer_loses_its_series_but_a_raised_alert_stays_until_cleared() {
    let m = MeshMetrics::new(10);
    m.set_peers("h1", &peers(&["h2", "h3"]));
    for p in ["h2", "h3"] {
        m.rr("h1", p, "rr", &[(1e-3, 1)]);
        m.throughput("h1", p, "stream", 1e9, 1e9);
        m.alert("h1", p, "rr", true);
    }
    m.alert("h1", "h3", "rr", false);
    m.set_peers("h1", &peers(&["h2"]));
    let s = samples(&m);
    assert!(s.iter().all(|l| !l.contains(r#"peer="h3""#)), "{s:#?}");
    m.set_peers("h1", &[]);
    let s = samples(&m);
    let h2: Vec<_> = s.iter().filter(|l| l.contains(r#"peer="h2""#)).collect();
    assert_eq!(
        h2,
        [r#"fathom_mesh_alert{source="h1",peer="h2",test="rr"} 1"#],
        "only the raised alert outlives the sample"
    );
    m.alert("h1", "h2", "rr", false);
    assert!(of(&m, "fathom_mesh_alert").is_empty());
}

#[test]
fn an_alert_reads_1_then_0_for_a_sampled_peer_and_goes_for_an_unsampled_one() {
    let m = MeshMetrics::new(10);
    m.set_peers("h1", &peers(&["h2"]));
    m.alert("h1", "h2", "rr", true);
    m.alert("h1", "h9", "rr", true);
    assert_eq!(
        of(&m, "fathom_mesh_alert"),
        [
            r#"fathom_mesh_alert{source="h1",peer="h2",test="rr"} 1"#,
            r#"fathom_mesh_alert{source="h1",peer="h9",test="rr"} 1"#
        ]
    );
    m.alert("h1", "h2", "rr", false);
    m.alert("h1", "h9", "rr", false);
    assert_eq!(
        of(&m, "fathom_mesh_alert"),
        [r#"fathom_mesh_alert{source="h1",peer="h2",test="rr"} 0"#]
    );
}

#[test]
fn a_tests_three_outcomes_appear_together_and_the_health_families_fill() {
    let m = MeshMetrics::new(10);
    m.outcome("h1", "stream", Outcome::Skipped);
    m.outcome("h1", "stream", Outcome::Skipped);
    m.scheduler_lag("h1", 0.003);
    m.scheduler_lag("h1", f64::NAN);
    m.stored("h1", 1_700_000_001.0);
    m.stored("h1", -1.0);
    let s = samples(&m);
    for line in [
        r#"fathom_mesh_tests_total{source="h1",test="stream",outcome="run"} 0"#,
        r#"fathom_mesh_tests_total{source="h1",test="stream",outcome="skipped"} 2"#,
        r#"fathom_mesh_tests_total{source="h1",test="stream",outcome="failed"} 0"#,
        r#"fathom_mesh_scheduler_lag_seconds_count{source="h1"} 1"#,
        r#"fathom_mesh_scheduler_lag_seconds_bucket{le="0.005",source="h1"} 1"#,
        r#"fathom_mesh_last_stored_timestamp_seconds{source="h1"} 1700000001.0"#,
    ] {
        assert!(s.iter().any(|l| l == line), "{line} missing: {s:#?}");
    }
}

#[test]
fn a_removed_source_leaves_no_series_and_the_others_keep_theirs() {
    let m = MeshMetrics::new(10);
    for src in ["h1", "h2"] {
        let other = if src == "h1" { "h2" } else { "h1" };
        m.set_peers(src, &peers(&[other]));
        m.rr(src, other, "rr", &[(1e-3, 1)]);
        m.rr(src, "h9", "rr", &[(1e-3, 1)]);
        m.datagrams(src, other, "udp", 1, 1);
        m.alert(src, "h9", "rr", true);
        m.outcome(src, "rr", Outcome::Run);
        m.scheduler_lag(src, 0.01);
        m.stored(src, 1.0);
    }
    let before = samples(&m).len();
    m.remove_source("h1");
    let s = samples(&m);
    assert!(s.iter().all(|l| !l.contains(r#"source="h1""#)), "{s:#?}");
    assert_eq!(s.len() * 2, before, "h2 keeps exactly its half");
}

#[test]
fn a_member_that_left_leaves_no_series_as_source_or_peer_alerts_included() {
    let m = MeshMetrics::new(10);
    for src in ["h1", "h2", "h3"] {
        let others: Vec<&str> = ["h1", "h2", "h3"]
            .into_iter()
            .filter(|p| *p != src)
            .collect();
        m.set_peers(src, &peers(&others));
        for p in &others {
            m.rr(src, p, "rr", &[(1e-3, 1)]);
            m.alert(src, p, "rr", true);
        }
        m.outcome(src, "rr", Outcome::Run);
    }
    m.remove_member("h3");
    let s = samples(&m);
    let h3: Vec<_> = s.iter().filter(|l| l.contains(r#""h3""#)).collect();
    assert!(h3.is_empty(), "{h3:#?}");
    assert_eq!(
        of(&m, "fathom_mesh_sampled_peers"),
        [
            r#"fathom_mesh_sampled_peers{source="h1"} 1"#,
            r#"fathom_mesh_sampled_peers{source="h2"} 1"#
        ]
    );
    assert_eq!(
        of(&m, "fathom_mesh_alert").len(),
        2,
        "h1 -> h2 and h2 -> h1"
    );
    assert_eq!(of(&m, "fathom_mesh_rr_latency_seconds_count").len(), 2);
}

#[test]
fn labels_are_cut_to_their_bound_and_escaped() {
    let m = MeshMetrics::new(10);
    let long = "é".repeat(200);
    m.outcome(&long, "a \"quoted\"\ntest\\", Outcome::Run);
    let s = samples(&m);
    let cut = "é".repeat(MAX_LABEL / 2);
    assert!(s[0].contains(&format!(r#"source="{cut}""#)), "{s:?}");
    assert!(s[0].contains(r#"test="a \"quoted\"\ntest\\""#), "{s:?}");
}

#[test]
fn figures_that_are_not_numbers_are_dropped() {
    let m = MeshMetrics::new(10);
    m.set_peers("h1", &peers(&["h2"]));
    m.throughput("h1", "h2", "stream", f64::NAN, 1.0);
    m.throughput("h1", "h2", "stream", 1.0, f64::INFINITY);
    m.rr("h1", "h2", "rr", &[(-1.0, 3), (f64::NAN, 2)]);
    assert!(of(&m, "fathom_mesh_throughput_bytes_per_second").is_empty());
    let count = r#"fathom_mesh_rr_latency_seconds_count{source="h1",peer="h2",test="rr"} 0"#;
    assert!(samples(&m).iter().any(|l| l == count));
}

#[test]
fn the_agent_counts_are_read_at_each_scrape() {
    let m = MeshMetrics::new(10);
    let counts = AgentCounts::default();
    m.watch_agent(counts.clone());
    counts.served.fetch_add(3, Ordering::Relaxed);
    counts.running.fetch_add(1, Ordering::Relaxed);
    counts.memory_reserved.fetch_add(1 << 20, Ordering::Relaxed);
    assert_eq!(
        samples(&m),
        [
            "fathom_agent_tests_running 1",
            "fathom_agent_tests_served_total 3",
            "fathom_agent_memory_reserved_bytes 1048576"
        ]
    );
}

#[test]
fn the_prometheus_text_format_names_counters_with_their_total() {
    let m = MeshMetrics::new(10);
    m.outcome("h1", "rr", Outcome::Run);
    let text = m.encode_prometheus();
    assert!(
        text.contains("# TYPE fathom_mesh_tests_total counter\n"),
        "{text}"
    );
    assert!(!text.contains("# EOF"), "{text}");
}
