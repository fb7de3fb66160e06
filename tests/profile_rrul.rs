//! Latency under load: a profile with probe groups (rrul) ends with its probes' idle and
//! loaded latency, the load's throughput and the responsiveness in RPM, in the table and as
//! the `rrul` member of `--json`, and `--plot` draws them on one timeline. The fixture is
//! profiles/rrul.toml without its UDP probe group.

mod common;
use common::*;

/// rrul.toml without its UDP group.
fn fixture() -> String {
    format!(
        "{}/tests/fixtures/rrul-tcp.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn rrul_reports_idle_and_loaded_probe_latency_rpm_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("rrul.svg");
    let doc = run_json(
        &[
            "profile",
            "run",
            &fixture(),
            "--set",
            "idle=500ms",
            "--set",
            "duration=1s",
            "--json",
            "--no-store",
            "--plot",
            svg.to_str().unwrap(),
        ],
        60,
    );
    let rrul = &doc["rrul"];
    let kinds: Vec<&str> = rrul["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tcp_rr", "fresh_connection"]);
    for p in rrul["probes"].as_array().unwrap() {
        for phase in ["idle", "loaded"] {
            let ph = &p[phase];
            assert!(u(&ph["samples"]) > 0, "{} {phase}: {ph}", p["group"]);
            assert!(ph["p90_us"].as_f64().unwrap() >= ph["p50_us"].as_f64().unwrap());
        }
    }
    let load: Vec<&str> = rrul["load"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["group"].as_str().unwrap())
        .collect();
    assert_eq!(load, ["up", "down"]);
    for l in rrul["load"].as_array().unwrap() {
        assert!(l["bits_per_second"].as_f64().unwrap() > 0.0, "{l}");
    }
    assert!(rrul["rpm"].as_f64().unwrap() > 0.0);
    assert!(rrul["idle_rpm"].as_f64().unwrap() > 0.0);
    let image = std::fs::read_to_string(&svg).unwrap();
    assert!(image.contains("<svg") && image.contains("tcp-probe p50, ms"));
}

#[test]
fn plot_without_probes_is_refused_before_anything_runs() {
    let stream = format!(
        "{}/profiles/netperf-stream.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let err = run_exit(
        &["profile", "run", &stream, "--no-store", "--plot", "x.svg"],
        20,
        2,
    );
    assert!(err.contains("no probe group"), "{err}");
    let err = run_exit(
        &[
            "profile",
            "run",
            &fixture(),
            "--no-store",
            "--plot",
            "x.gif",
        ],
        20,
        2,
    );
    assert!(err.contains("--plot"), "{err}");
}
