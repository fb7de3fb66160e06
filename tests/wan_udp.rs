//! `fathom udp` across the lab's WAN emulator (needs root; without it each test prints SKIP and
//! passes): loss, rate and jitter as fathom measures them against what the emulator counted.
//! Each test makes its own lab (see `tests/wan_common`), removed even when the test fails.

mod common;
mod wan_common;
use common::{run_program as run, words};
use wan_common::*;

/// `fathom udp ARGS` from the root namespace with h1 as the client and h2 as the server (so the
/// report carries the emulator's counters): its arguments.
fn udp_args<'a>(lab: &'a TestLab, args: &[&'a str]) -> Vec<&'a str> {
    let hosts = [
        "udp",
        "--lab",
        &lab.name,
        "--server",
        "h2",
        "--clients",
        "h1",
    ];
    [&hosts[..], args].concat()
}

/// Runs `fathom udp ARGS --json` as [`udp_args`] says and returns its JSON document.
fn udp_across(lab: &TestLab, args: &[&str], secs: u64) -> serde_json::Value {
    let all = [udp_args(lab, args), vec!["--json"]].concat();
    let doc: serde_json::Value = serde_json::from_str(&fathom_ok(&all, secs)).unwrap();
    assert!(doc["error"].is_null(), "fathom {all:?}: {}", doc["error"]);
    doc
}

/// Makes a lab with `wan` and runs `fathom udp ARGS` across it (see [`udp_across`]), `args`
/// written as typed; None when the calling test (named by its thread, as the test harness
/// names it) is skipped for want of root.
fn udp_lab(tag: &str, wan: &str, args: &str) -> Option<(TestLab, serde_json::Value)> {
    if !root_or_skip(std::thread::current().name().unwrap_or("wan_udp")) {
        return None;
    }
    let lab = TestLab::up(tag, wan);
    let doc = udp_across(&lab, &words(args), 90);
    Some((lab, doc))
}

/// One direction's counter delta over the test, from the report's `wan[0]`.
fn wan_delta(doc: &serde_json::Value, dir: &str, field: &str) -> u64 {
    let link = &doc["wan"][0];
    let at = |when: &str| link[when][dir][field].as_u64().unwrap_or(0);
    at("counters_after") - at("counters_before")
}

#[test]
fn udp_loss_agrees_with_the_emulators_drops_and_the_delay_is_its_delay() {
    let args = "-n 20000 --pps 20k --size 200 --buffer 4M";
    let Some((_lab, doc)) = udp_lab("udploss", "loss=1%,delay=2ms", args) else {
        return;
    };
    let u = &doc["summary"]["udp"];
    let lost = u["lost"].as_u64().unwrap();
    let dropped = wan_delta(&doc, "a_to_b", "dropped_loss");
    // The loss model drops any frame h1 sends; frames other than the datagrams (the control
    // connection, ARP) are the only ones the emulator may have dropped that fathom did not miss.
    let others = wan_delta(&doc, "a_to_b", "received").saturating_sub(20_000);
    assert!(lost > 100, "1% of 20000: {u}");
    assert!(
        lost <= dropped && dropped - lost <= others,
        "fathom lost {lost}, the emulator dropped {dropped} ({others} other frames): {u} {}",
        doc["wan"]
    );
    assert_eq!(u["missing"]["datagrams"].as_u64(), Some(lost), "{u}");
    assert_eq!(
        u["missing"]["path"].as_u64(),
        Some(lost),
        "the emulator's: {u}"
    );
    let d = &u["one_way_delay"];
    assert_eq!(d["clock"].as_str(), Some("estimated"), "{d}");
    let (mean, error) = (
        d["mean_us"].as_f64().unwrap(),
        d["error_us"].as_f64().unwrap(),
    );
    // Never under the emulator's 2 ms (less the offset's error); over it by the path's own
    // time and a loaded machine's wake-ups, generously.
    assert!(
        mean >= 2000.0 - error - 100.0 && mean <= 6000.0 + error,
        "one-way delay {mean} µs ± {error}, the emulator holds 2 ms: {d}"
    );
}

#[test]
fn udp_through_a_100m_link_is_received_at_100m_and_the_excess_is_lost() {
    let args = "-t 3 --size 1472 --rate 150M --buffer 4M";
    let Some((lab, doc)) = udp_lab("udprate", "rate=100M", args) else {
        return;
    };
    let u = &doc["summary"]["udp"];
    // The emulator's rate counts whole Ethernet frames: payload + UDP 8 + IPv4 20 + Ethernet 14.
    let wire = u["datagrams_per_second"].as_f64().unwrap() * (1472.0 + 42.0) * 8.0;
    // Within 2% of the link's rate, also on a loaded machine: the emulator's departure times
    // are fixed on arrival, and its thread spins too little to be throttled by the kernel.
    assert!(
        (98e6..=102e6).contains(&wire),
        "received {wire} bit/s on the wire, the link carries 100M: {u} {}",
        doc["wan"]
    );
    let (sent, got) = (
        u["sender_datagrams"].as_u64().unwrap(),
        u["datagrams"].as_u64().unwrap(),
    );
    let lost = u["lost"].as_u64().unwrap();
    assert!(lost * 5 > sent, "a third of 150M is over 100M: {u}");
    // In flight at the window's end: what the sender sent in the last one-way delay (the
    // emulator's queue), whose losses are not yet gaps behind a later arrival; with margin.
    let delay_s = u["one_way_delay"]["mean_us"].as_f64().unwrap() / 1e6;
    let in_flight =
        (u["sender_datagrams_per_second"].as_f64().unwrap() * delay_s * 1.5) as u64 + 100;
    assert!(
        sent.saturating_sub(got).abs_diff(lost) <= in_flight,
        "sent {sent} - received {got} against {lost} lost: {u}"
    );
    let dropped = wan_delta(&doc, "a_to_b", "dropped_queue");
    assert!(
        dropped.abs_diff(lost) <= in_flight,
        "the emulator's queue dropped {dropped}, fathom lost {lost}: {u}"
    );
    let path = u["missing"]["path"].as_u64().unwrap();
    assert!(
        path.abs_diff(lost) <= in_flight,
        "missing on the path {path}, lost {lost}: {u}"
    );
    // GSO cannot fragment: datagrams larger than the path's 1500-byte MTU are refused, clearly.
    let gso = udp_args(&lab, &["--gso", "--size", "4000", "-t", "1"]);
    let out = run(FATHOM, &gso, 60);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--gso: 4000-byte datagrams do not fit one packet"),
        "{err}"
    );
}

#[test]
fn udp_jitter_through_an_emulator_with_2ms_of_jitter_is_of_its_size() {
    let args = "-n 600 --pps 200 --size 200";
    let Some((_lab, doc)) = udp_lab("udpjit", "delay=5ms,jitter=2ms", args) else {
        return;
    };
    let u = &doc["summary"]["udp"];
    assert_eq!(u["datagrams"].as_u64(), Some(600), "{u}");
    // Each delay is uniform in 5 ms ± 2 ms; 5 ms apart, no datagram waits for the one before
    // it, so successive transit differences |D| average 4/3 ms, which RFC 3550's running
    // estimate (1/16 of each new |D|) follows to within about 0.2 ms. Generous bounds: the
    // sender's pacing and the emulator's wake-ups add a little.
    let jitter = u["jitter_us"].as_f64().unwrap();
    assert!(
        (700.0..=2200.0).contains(&jitter),
        "jitter {jitter} µs through ±2 ms of emulated jitter (about 1333 expected): {u}"
    );
    let delay = u["one_way_delay"]["mean_us"].as_f64().unwrap();
    assert!(
        (4500.0..=9000.0).contains(&delay),
        "one-way delay {delay} µs through 5 ms ± 2 ms: {u}"
    );
}
