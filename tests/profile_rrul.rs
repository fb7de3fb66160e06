//! Latency under load: a profile with probe groups (rrul) ends with its probes' idle and
//! loaded latency, the load's throughput and the responsiveness in RPM, in the table and as
//! the `rrul` member of `--json`, and `--plot` draws them on one timeline; across a lab WAN
//! link a deep queue shows bufferbloat and a shallow one keeps a higher RPM. The fixture is
//! profiles/rrul.toml without its UDP probe group.

mod common;
mod wan_common;
use common::*;
use wan_common::{root_or_skip, TestLab, FATHOM, H2};

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
    let fixture = fixture();
    let set = words("--set idle=500ms --set duration=1s --json --no-store --plot");
    let profile = ["profile", "run", &fixture];
    let doc = run_json(&[&profile[..], &set, &[svg.to_str().unwrap()]].concat(), 60);
    let rrul = &doc["rrul"];
    assert_eq!(
        each_str(&rrul["probes"], "kind"),
        ["tcp_rr", "fresh_connection"]
    );
    for p in rrul["probes"].as_array().unwrap() {
        for phase in ["idle", "loaded"] {
            let ph = &p[phase];
            assert!(u(&ph["samples"]) > 0, "{} {phase}: {ph}", p["group"]);
            assert!(ph["p90_us"].as_f64().unwrap() >= ph["p50_us"].as_f64().unwrap());
        }
    }
    assert_eq!(each_str(&rrul["load"], "group"), ["up", "down"]);
    for l in rrul["load"].as_array().unwrap() {
        assert!(l["bits_per_second"].as_f64().unwrap() > 0.0, "{l}");
    }
    assert!(rrul["rpm"].as_f64().unwrap() > 0.0);
    assert!(rrul["idle_rpm"].as_f64().unwrap() > 0.0);
    let want = rpm_of_trimmed_means(&doc);
    let rpm = rrul["rpm"].as_f64().unwrap();
    assert!(
        (rpm - want).abs() < 1e-6 * want,
        "rpm {rpm}, formula {want}"
    );
    let image = std::fs::read_to_string(&svg).unwrap();
    assert!(image.contains("<svg") && image.contains("tcp-probe p50, ms"));
}

/// The loaded RPM docs/profiles.md's formula gives from the document's trimmed means:
/// 60000 / (1/4·(TM(connect) + TM(write) + TM(read)) + 1/2·TM(tcp probe round trip)), the
/// fresh probe's flowops those of its last (loaded) transaction.
fn rpm_of_trimmed_means(doc: &serde_json::Value) -> f64 {
    let probes = doc["rrul"]["probes"].as_array().unwrap();
    let of = |kind: &str| probes.iter().find(|p| p["kind"] == kind).unwrap();
    let own_ms = of("tcp_rr")["loaded"]["trimmed_mean_us"].as_f64().unwrap() / 1e3;
    let fresh = of("fresh_connection")["group"].clone();
    let group = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == fresh)
        .unwrap();
    let ops = group["report"]["summary"]["profile"]["ops"]
        .as_array()
        .unwrap();
    let last = ops.iter().map(|o| u(&o["transaction"])).max().unwrap();
    let tm_ms = |name: &str| {
        let o = ops
            .iter()
            .find(|o| u(&o["transaction"]) == last && o["name"] == name)
            .unwrap();
        o["client"]["trimmed_mean_us"].as_f64().unwrap() / 1e3
    };
    let fresh_ms = tm_ms("connect") + tm_ms("write") + tm_ms("read");
    60_000.0 / (fresh_ms / 4.0 + own_ms / 2.0)
}

#[test]
fn plot_without_probes_is_refused_before_anything_runs() {
    let stream = format!(
        "{}/profiles/netperf-stream.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let plot = ["profile", "run", &stream, "--no-store", "--plot", "x.svg"];
    run_exit_says(&plot, 20, 2, "no probe group");
    let fixture = fixture();
    let gif = ["profile", "run", &fixture, "--no-store", "--plot", "x.gif"];
    run_exit_says(&gif, 20, 2, "--plot");
}

/// The lab test's WAN link but for its queue: slow enough that 8 streams fill a deep queue.
const LINK: &str = "rate=4M,delay=5ms";

/// The fixture with every group aimed at `remote`, written into `dir`, without its
/// fresh-connection probe: over a drop-tail queue a lost SYN waits 1 s, then 3 s, and the
/// group's one flow runs its probes in turn, so one loss holds every later probe and the
/// shallow queue's RPM would measure SYN backoff, not queueing; the persistent TCP probe's
/// trimmed mean leaves such outliers out.
fn aimed_at(dir: &std::path::Path, remote: &str) -> String {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let fresh = text.find("[[group]]\nname = \"fresh-probe\"").unwrap();
    let text = &text[..fresh];
    let text = text.replace(
        "[[group]]\n",
        &format!("[[group]]\nremote = \"{remote}\"\n"),
    );
    let path = dir.join("rrul-remote.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// rrul run from h1 against h2's agent across the lab's WAN link; its `rrul` member. Cubic
/// at both ends: the hosts' default may be BBR, which keeps the queue short by design.
fn rrul_from_h1(lab: &TestLab, file: &str) -> serde_json::Value {
    let key = lab.key_file();
    let args = [
        "profile",
        "run",
        file,
        "--set",
        "idle=1s",
        "--set",
        "duration=5s",
        "--set",
        "probe_rate=20",
        "--cc",
        "cubic",
        "--key-file",
        &key,
        "--json",
        "--no-store",
    ];
    let out = lab.exec_h1(FATHOM, &args, 60);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", stderr(&out)));
    assert_eq!(doc["totals"]["failed"], 0, "{}", stderr(&out));
    doc["rrul"].clone()
}

/// The TCP probe's median in `phase`, µs.
fn tcp_probe(rrul: &serde_json::Value, phase: &str) -> f64 {
    rrul["probes"][0][phase]["p50_us"].as_f64().unwrap()
}

#[test]
fn a_deep_queue_grows_the_loaded_latency_and_a_shallow_one_keeps_a_higher_rpm() {
    if !root_or_skip("rrul across a lab WAN link") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = aimed_at(dir.path(), H2);
    // The shallow queue first: what a deep queue holds would still drain into the next run.
    let lab = TestLab::up("rrul", &format!("{LINK},queue=40p"));
    let shallow = rrul_from_h1(&lab, &file);
    lab.set_wan(&format!("{LINK},queue=1000p"));
    let deep = rrul_from_h1(&lab, &file);
    drop(lab);
    assert!(
        tcp_probe(&deep, "loaded") > 2.0 * tcp_probe(&deep, "idle"),
        "bufferbloat: {deep}"
    );
    let rpm = |r: &serde_json::Value| r["rpm"].as_f64().unwrap();
    assert!(rpm(&deep) < rpm(&shallow), "deep {deep}\nshallow {shallow}");
}
