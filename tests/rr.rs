//! Request/response end to end: rr, crr and UDP, counts, percentiles, losses, schedules.

mod common;
use common::*;
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn ok_json(args: &[&str]) -> Value {
    let out = run(args, 120);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    json(&out)
}

/// `--affinity C/C`: both ends on this machine's first usable CPU. Tests of what is counted,
/// not of placement, ask for it: with each end on a CPU of its own (the loopback default, as
/// between two hosts) every answer needs the other CPU, and on a loaded machine a busy one
/// delays some answers by milliseconds, past a short UDP timeout or a window's end.
fn one_cpu() -> [String; 2] {
    let cpu = fathom_engine::clock::usable_cpus()[0];
    ["--affinity".into(), format!("{cpu}/{cpu}")]
}

fn ok_json_on_one_cpu(args: &[&str]) -> Value {
    let pin = one_cpu();
    ok_json(&[args, &[pin[0].as_str(), pin[1].as_str()]].concat())
}

#[test]
fn a_transaction_count_is_performed_exactly_and_counted_at_both_ends() {
    for args in [
        &["rr", "-n", "10000", "--json"][..],
        &["rr", "-n", "10000", "-P", "3", "--burst", "4", "--json"],
        &["rr", "-n", "3000", "-R", "--json"],
    ] {
        let s = &ok_json(args)["summary"]["rr"];
        let n: u64 = args[2].parse().unwrap();
        assert_eq!(s["transactions"].as_u64(), Some(n), "{args:?}: asker");
        assert_eq!(s["answered"].as_u64(), Some(n), "{args:?}: answerer");
    }
}

#[test]
fn percentiles_are_monotonic_and_the_mean_lies_between_min_and_max() {
    for args in [
        &["rr", "-t", "1", "--json"][..],
        &["crr", "-t", "1", "--json"],
        &["rr", "--udp", "-t", "1", "--json"],
        &["rr", "-t", "1", "--size", "100,8K", "-P", "4", "--json"],
    ] {
        let j = ok_json(args);
        let l = &j["summary"]["rr"]["latency_us"];
        assert!(
            l.is_object(),
            "{args:?}: no latency in {}",
            j["summary"]["rr"]
        );
        let v: Vec<f64> = ["min", "p50", "p90", "p99", "p999", "max"]
            .iter()
            .map(|k| f(&l[k]))
            .collect();
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "{args:?}: {v:?}");
        assert!(
            f(&l["min"]) <= f(&l["mean"]) && f(&l["mean"]) <= f(&l["max"]),
            "{args:?}: {l}"
        );
        assert!(f(&j["summary"]["rr"]["transactions_per_second"]) > 0.0);
        for iv in j["intervals"].as_array().unwrap() {
            if let (Some(a), Some(b)) = (
                iv["rr"]["latency_p50_us"].as_f64(),
                iv["rr"]["latency_p99_us"].as_f64(),
            ) {
                assert!(a <= b, "{iv}");
            }
        }
    }
}

#[test]
fn udp_losses_are_counted_never_as_fast_ones_and_the_test_ends_on_time() {
    let j = ok_json_on_one_cpu(&[
        "rr",
        "--udp",
        "-n",
        "500",
        "--udp-timeout",
        "20ms",
        "--test-drop-every",
        "10",
        "--json",
    ]);
    let s = &j["summary"]["rr"];
    let (tx, lost) = (
        s["transactions"].as_u64().unwrap(),
        s["lost"].as_u64().unwrap(),
    );
    assert_eq!(
        tx + lost,
        500,
        "every transaction is either answered or lost"
    );
    assert!(
        (50..=60).contains(&lost),
        "every 10th request dropped: {lost} lost"
    );
    assert!(
        f(&s["latency_us"]["max"]) < 20_000.0,
        "a lost transaction never shows as a latency"
    );

    let started = std::time::Instant::now();
    let j = ok_json_on_one_cpu(&[
        "rr",
        "--udp",
        "-t",
        "2",
        "--udp-timeout",
        "50ms",
        "--test-drop-every",
        "10",
        "--json",
    ]);
    assert!(
        started.elapsed().as_secs_f64() < 8.0,
        "a timed UDP test ends on time"
    );
    let s = &j["summary"]["rr"];
    let (tx, lost) = (f(&s["transactions"]), f(&s["lost"]));
    let share = lost / (tx + lost);
    assert!((0.07..=0.13).contains(&share), "about 10% lost: {share}");
}

#[test]
fn an_open_loop_rate_is_held() {
    let j = ok_json_on_one_cpu(&["rr", "-t", "2", "--rate", "2000", "--json"]);
    let tps = f(&j["summary"]["rr"]["transactions_per_second"]);
    assert!(
        (tps - 2000.0).abs() <= 40.0,
        "2000 tx/s scheduled, {tps} measured"
    );
    assert_eq!(j["test"]["rr"]["rate"], 2000.0);
}

#[test]
fn crr_reports_connections_per_second() {
    let j = ok_json(&["crr", "-t", "1", "-P", "2", "--json"]);
    let s = &j["summary"]["rr"];
    assert!(f(&s["connections_per_second"]) > 0.0);
    assert_eq!(s["connections_per_second"], s["transactions_per_second"]);
}

#[test]
fn busy_poll_quickack_and_segments_per_transaction() {
    let j = ok_json(&[
        "rr",
        "-t",
        "1",
        "--busy-poll",
        "--quickack",
        "--nodelay",
        "--json",
    ]);
    assert_eq!(j["test"]["busy_poll"], true);
    assert_eq!(j["hosts"][1]["wait"], "busy-poll");
    let seg = &j["summary"]["rr"]["segments_per_transaction"];
    assert!(
        f(&seg["request"]) >= 1.0 && f(&seg["response"]) >= 1.0,
        "{seg}"
    );
}

#[test]
fn rr_outputs_validate_against_the_schema() {
    for args in [
        &["rr", "-t", "1", "--json"][..],
        &["crr", "-n", "200", "--json"],
        &["rr", "--udp", "-n", "200", "--json"],
    ] {
        let doc = ok_json(args);
        assert_valid(&doc, &format!("{args:?}"));
    }
}

#[test]
fn bad_request_response_input_is_a_usage_error() {
    for (args, needle) in [
        (&["rr", "--size", "0"][..], "--size"),
        (&["rr", "--size", "1,2,3"], "--size"),
        (&["rr", "--burst", "0"], "--burst"),
        (&["rr", "--rate", "-5"], "--rate"),
        (&["crr", "--udp"], "--udp"),
        (&["rr", "--udp", "--size", "70000"], "--size"),
    ] {
        let out = run(args, 30);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
