//! The stream test end to end, with the real binary and its in-process or separate agent.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn byte_count_moves_exactly_that_many_bytes_at_both_ends() {
    let j = run_json(&["stream", "-n", "100M", "-P", "3", "--json"], 120);
    let s = &j["summary"];
    for field in [
        "bytes",
        "sender_bytes",
        "total_bytes_received",
        "total_bytes_sent",
    ] {
        assert_eq!(u(&s[field]), 104_857_600, "summary.{field}");
    }
    let flows = j["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3);
    assert_eq!(
        flows.iter().map(|f| u(&f["bytes"])).sum::<u64>(),
        104_857_600
    );
}

#[test]
fn bidir_byte_count_moves_that_many_each_way_and_reverse_is_received_locally() {
    let out = run_ok(&["stream", "-n", "10M", "--bidir", "--json"], 120);
    let j = json(&out);
    let dirs = j["summary"]["directions"].as_array().unwrap();
    assert_eq!(dirs.len(), 2);
    for d in dirs {
        assert_eq!(u(&d["bytes"]), 10 << 20, "{}", d["direction"]);
    }
    let out = run(&["stream", "-n", "5M", "-R", "--json"], 120);
    let j = json(&out);
    assert_eq!(j["test"]["direction"], "reverse");
    assert_eq!(u(&j["summary"]["bytes"]), 5 << 20);
    assert_eq!(j["flows"][0]["direction"], "reverse");
}

#[test]
fn buffer_above_rmem_max_reports_effective_size_and_clamp() {
    let rmem_max: u64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let ask = (rmem_max * 2).to_string();
    let j = run_json(&["stream", "-t", "1", "--buffer", &ask, "--json"], 60);
    let b = &j["summary"]["buffers"];
    assert_eq!(b["clamped"], true);
    assert_eq!(u(&b["requested"]["recv"]), rmem_max * 2);
    assert_eq!(
        u(&b["effective_recv"]),
        rmem_max * 2,
        "Linux doubles the capped request"
    );
    let warnings: Vec<&str> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("net.core.rmem_max") && w.contains(&rmem_max.to_string())),
        "{warnings:?}"
    );
}

#[test]
fn json_holds_flows_summing_to_the_summary_and_intervals_covering_the_window() {
    let j = run_json(
        &[
            "stream", "-t", "2", "--omit", "0.5s", "-i", "0.3s", "-P", "2", "--json",
        ],
        60,
    );
    let s = &j["summary"];
    let flows = j["flows"].as_array().unwrap();
    assert_eq!(
        flows.iter().map(|f| u(&f["bytes"])).sum::<u64>(),
        u(&s["bytes"])
    );
    let bps: f64 = flows
        .iter()
        .map(|f| f["bits_per_second"].as_f64().unwrap())
        .sum();
    assert!((bps - s["bits_per_second"].as_f64().unwrap()).abs() <= 1e-6 * bps.max(1.0));
    let ivs: Vec<&Value> = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["omitted"] == false)
        .collect();
    let first = ivs.first().unwrap()["start"].as_f64().unwrap();
    let last = ivs.last().unwrap()["end"].as_f64().unwrap();
    assert!(
        (first - 0.5).abs() < 0.05,
        "window starts after the warm-up: {first}"
    );
    assert!(
        (last - 2.5).abs() < 0.05,
        "window ends at omit + time: {last}"
    );
    for w in ivs.windows(2) {
        assert_eq!(w[0]["end"], w[1]["start"], "intervals are contiguous");
    }
    let window_bytes: u64 = ivs.iter().map(|i| u(&i["bytes"])).sum();
    assert_eq!(
        window_bytes,
        u(&s["bytes"]),
        "window intervals add up to the summary"
    );
    assert!(s["cpu"]["local"]["total"].is_number() && s["cpu"]["remote"]["total"].is_number());
    assert!(
        s["cpu"]["local"]["busiest_cpu"]["total"].as_f64().unwrap()
            >= s["cpu"]["local"]["total"].as_f64().unwrap() - 1e-9
    );
}

#[test]
fn json_output_validates_against_the_schema() {
    for args in [
        &["stream", "-t", "1", "--json"][..],
        &["stream", "-n", "1M", "--bidir", "-P", "2", "--json"],
        &["stream", "127.0.0.1:1", "--json"],
    ] {
        let out = run(args, 60);
        let doc = json(&out);
        assert_valid(&doc, &format!("{args:?}"));
    }
}

#[test]
fn csv_has_a_header_and_interval_rows() {
    let out = run_ok(&["stream", "-t", "1", "-i", "0.25s", "--csv"], 60);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("start,end,flow"));
    assert!(lines.filter(|l| l.contains(",sum,")).count() >= 4);
}

#[test]
fn a_thousand_flows_work() {
    let j = run_json(&["stream", "-P", "1000", "-t", "2", "--json"], 120);
    assert_eq!(j["flows"].as_array().unwrap().len(), 1000);
    assert!(u(&j["summary"]["bytes"]) > 0);
}

#[test]
fn ipv6_runs_over_the_ipv6_loopback() {
    let j = run_json(&["stream", "-6", "-n", "1M", "--json"], 60);
    assert!(
        j["flows"][0]["sender"]
            .as_str()
            .unwrap()
            .starts_with("[::1]"),
        "{}",
        j["flows"][0]
    );
}

#[test]
fn the_table_shows_the_summary() {
    let out = run_ok(&["stream", "-t", "1"], 60);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("bit/s"), "{text}");
    assert!(text.contains("cpu"), "{text}");
}
