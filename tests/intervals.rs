//! Interval edges end to end: on the grid asked for, never backwards, the true instants beside.

mod common;
use common::*;

#[test]
fn a_counted_run_has_grid_intervals_that_never_run_backwards() {
    let j = run_json(
        &["rr", "-n", "20000", "-i", "100ms", "--json", "--no-store"],
        60,
    );
    let ivs = j["intervals"].as_array().expect("intervals");
    assert!(!ivs.is_empty());
    let num = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
    for (k, iv) in ivs.iter().enumerate() {
        let (start, end) = (num(iv, "start"), num(iv, "end"));
        assert!(end > start, "interval {k} runs backwards: {iv}");
        assert!(num(iv, "measured_end") >= num(iv, "measured_start"), "{iv}");
        assert!(
            (start - k as f64 * 0.1).abs() < 1e-9,
            "interval {k} is off the grid: {iv}"
        );
        if k + 1 < ivs.len() {
            assert!(
                (end - start - 0.1).abs() < 1e-9,
                "interval {k} is off the grid: {iv}"
            );
        }
    }
}
