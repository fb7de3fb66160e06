//! TLS end to end on loopback with the in-process agent: exact byte counts through TLS, what the
//! report records about the sessions, the three kinds, bad input, and glibc's copy threshold
//! that fathom starts with on AMD (for rustls's copies). (Refusing a certificate
//! other than the pinned one is crates/engine/tests/tls.rs.)

mod common;
use common::*;
use serde_json::Value;

fn tls_run(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    if !all.contains(&"--json") {
        all.push("--json");
    }
    let out = run(&all, 120);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    let j = json(&out);
    assert_valid(&j, &format!("{all:?}"));
    j
}

#[test]
fn a_tls_stream_moves_exactly_the_bytes_asked_for() {
    let j = tls_run(&["stream", "--tls", "-n", "100M"]);
    let s = &j["summary"];
    assert_eq!(s["bytes"].as_u64(), Some(104_857_600), "{s}");
    assert_eq!(s["total_bytes_received"].as_u64(), Some(104_857_600));
    let t = &s["tls"];
    assert_eq!(t["version"], "1.3", "{t}");
    assert_eq!(t["suite"], "TLS13_AES_256_GCM_SHA384", "{t}");
    assert_eq!(t["record_size"].as_u64(), Some(16_384));
    assert_eq!(t["handshake_us"]["count"].as_u64(), Some(1), "{t}");
    assert!(t["handshake_us"]["mean"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(t["application_bytes"].as_u64(), Some(104_857_600), "{t}");
    // 6,400 full records, each with 22 bytes of header, tag and content type, and a handshake.
    let wire = t["wire_bytes"].as_u64().unwrap();
    assert!(wire >= 104_857_600 + 6_400 * 22, "{t}");
    assert!(wire < 104_857_600 + 6_400 * 22 + 20_000, "{t}");
    assert!(t["cpu_s_per_gb"]["local"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(j["test"]["tls"]["version"], "1.3");
}

#[test]
fn version_cipher_and_record_size_are_honoured() {
    let j = tls_run(&[
        "stream",
        "--tls-version",
        "1.2",
        "--cipher",
        "chacha20-poly1305",
        "--tls-record",
        "4K",
        "-n",
        "10M",
        "-P",
        "2",
    ]);
    let t = &j["summary"]["tls"];
    assert_eq!(t["version"], "1.2", "{t}");
    assert_eq!(
        t["suite"], "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "{t}"
    );
    assert_eq!(t["record_size"].as_u64(), Some(4096));
    assert_eq!(t["handshake_us"]["count"].as_u64(), Some(2), "{t}");
    assert_eq!(j["summary"]["bytes"].as_u64(), Some(10 << 20));
    // 2,560 records of 4 KB, each with its 5-byte header and 16-byte tag, and two handshakes.
    let wire = t["wire_bytes"].as_u64().unwrap();
    assert!(wire >= (10 << 20) + 2_560 * 21, "{t}");
    assert!(wire < (10 << 20) + 2_560 * 21 + 20_000, "{t}");
}

#[test]
fn rr_and_crr_run_inside_tls() {
    let j = tls_run(&["rr", "--tls", "-n", "2000", "--size", "100,10K"]);
    assert_eq!(j["summary"]["rr"]["transactions"].as_u64(), Some(2000));
    assert_eq!(j["summary"]["tls"]["version"], "1.3");
    assert!(j["summary"]["tls"]["cpu_s_per_gb"].is_null());
    let j = tls_run(&["crr", "--tls", "--cipher", "aes-128-gcm", "-n", "200"]);
    assert_eq!(j["summary"]["rr"]["transactions"].as_u64(), Some(200));
    let t = &j["summary"]["tls"];
    assert_eq!(t["suite"], "TLS13_AES_128_GCM_SHA256", "{t}");
    assert!(t["handshakes_per_second"].as_f64().unwrap() > 0.0, "{t}");
    assert!(t["handshake_us"].is_null(), "{t}");
}

#[test]
fn bad_tls_options_are_refused_with_one_line() {
    for (args, code, says) in [
        (
            &["stream", "--cipher", "bogus"][..],
            2,
            "--cipher: 'bogus' is not one of",
        ),
        (
            &["stream", "--tls-version", "1.1"],
            2,
            "--tls-version: '1.1'",
        ),
        (&["stream", "--tls", "--zerocopy"], 2, "--zerocopy:"),
        (
            &["rr", "--udp", "--tls"],
            2,
            "--tls: udp_rr does not run over TCP",
        ),
        (&["stream", "--tls-record", "32K"], 2, "--tls-record:"),
        // No kernel here offers fathom kTLS yet: with or without the module, one line, exit 1.
        (&["stream", "--ktls"], 1, "--ktls:"),
    ] {
        let out = run(args, 30);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn compare_clear_runs_both_and_reports_the_ratios() {
    let args = [
        "stream",
        "--compare-clear",
        "-n",
        "20M",
        "--iterations",
        "1",
        "--json",
    ];
    let j = run_json(&args, 120);
    assert_eq!(j["document"], "tls-comparison", "{j}");
    assert_eq!(j["rounds"].as_u64(), Some(1));
    for key in ["tls", "clear", "ratio"] {
        assert!(j[key]["rate"].as_f64().unwrap() > 0.0, "{j}");
    }
    // CPU time is read in clock ticks: a 20M clear run on loopback can end within one tick and
    // read 0, so only presence is asserted, and the ratio is then null, not 0.
    for key in ["tls", "clear"] {
        assert!(j[key]["cpu_local"].as_f64().unwrap() >= 0.0, "{j}");
    }
    let clear_cpu = j["clear"]["cpu_local"].as_f64().unwrap();
    assert_eq!(j["ratio"]["cpu_local"].is_null(), clear_cpu == 0.0, "{j}");
}

#[test]
fn a_client_agent_pins_the_server_agents_certificate() {
    let server = Agent::start(&[]);
    let client = Agent::start(&[]);
    for kind_args in [
        &["stream", "--tls", "-n", "10M"][..],
        &["crr", "--tls", "-n", "100"],
    ] {
        let j = tls_run(&across(&server.target(), &client.target(), kind_args));
        assert_eq!(j["summary"]["tls"]["version"], "1.3", "{kind_args:?}: {j}");
    }
}

/// GLIBC_TUNABLES as the process of an agent started from `cmd` holds it once it listens.
fn agent_tunables(cmd: std::process::Command) -> Option<String> {
    let agent = Agent::start_with(cmd, &[]);
    let env = std::fs::read(format!("/proc/{}/environ", agent.child.id())).unwrap_or_default();
    String::from_utf8_lossy(&env)
        .split('\0')
        .find_map(|v| v.strip_prefix("GLIBC_TUNABLES=").map(str::to_string))
}

#[test]
fn on_amd_fathom_runs_with_glibcs_vector_copies_and_keeps_a_threshold_the_user_set() {
    let amd = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .contains("AuthenticAMD");
    let started_again = amd && cfg!(all(target_arch = "x86_64", target_env = "gnu"));
    let mut plain = fathom();
    plain.env_remove("GLIBC_TUNABLES");
    assert_eq!(
        agent_tunables(plain),
        started_again.then(|| "glibc.cpu.x86_rep_movsb_threshold=4194304".to_string())
    );
    let own = "glibc.cpu.x86_rep_movsb_threshold=4096";
    let mut users = fathom();
    users.env("GLIBC_TUNABLES", own);
    assert_eq!(agent_tunables(users).as_deref(), Some(own));
}
