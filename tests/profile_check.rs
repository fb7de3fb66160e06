//! `fathom profile check|show|run` through the binary: every shipped profile validates (and the
//! TCP ones run their quick form), and each class of invalid profile exits 2 naming
//! FILE:LINE:COLUMN.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// The shipped profiles, sorted.
fn shipped() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_profile_validates() {
    let files = shipped();
    assert!(files.len() >= 11, "{files:?}");
    for f in files {
        let path = f.display().to_string();
        let out = run(&["profile", "check", &path], 30);
        assert!(out.status.success(), "{path}: {}", stderr(&out));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.starts_with(&format!("{path}: ok: ")), "{said}");
        let head = std::fs::read_to_string(&f).unwrap();
        assert!(
            head.starts_with("# "),
            "{path}: a comment header says what it mirrors"
        );
        assert!(
            head.contains("Mirrors "),
            "{path}: a comment header says what it mirrors"
        );
    }
}

#[test]
fn show_expands_the_variables_as_set() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/many-flows.toml");
    let path = f.display().to_string();
    let out = run_ok(&["profile", "show", &path, "--set", "threads=8"], 30);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("group port1: 8 threads x 1 flow per thread = 8 flows"),
        "{text}"
    );
    let plan = run_json(
        &["profile", "show", &path, "--set", "flows=2", "--json"],
        30,
    );
    assert_eq!(plan["groups"][0]["threads"], 64, "{plan}");
    assert_eq!(plan["groups"][0]["flows_per_thread"], 2, "{plan}");
}

/// A minimal good profile, to break one way per case.
const GOOD: &str = r#"[vars]
size = "64K"

[[group]]
threads = 2

[[group.transaction]]
flowops = [{ op = "connect" }]

[[group.transaction]]
duration = "1s"
flowops = [{ op = "write", size = "$size" }]
"#;

#[test]
fn invalid_profiles_exit_2_at_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "unknown-key",
            GOOD.replace("threads = 2", "thraeds = 2"),
            "5:1",
            "did you mean 'threads'?",
        ),
        (
            "bad-size",
            GOOD.replace("\"$size\"", "\"64X\""),
            "12:35",
            "'64X' is not a size",
        ),
        (
            "missing-remote",
            GOOD.replace("threads = 2", "remote = \"$server\""),
            "5:10",
            "'$server' is never set",
        ),
        (
            "cannot-follow",
            GOOD.replace(
                "{ op = \"write\"",
                "{ op = \"disconnect\" }, { op = \"read\"",
            ),
            "12:42",
            "read after disconnect",
        ),
        (
            "never-set",
            GOOD.replace("threads = 2", "threads = \"${threads}\""),
            "5:11",
            "'$threads' is never set",
        ),
        (
            "timed-think-alone",
            GOOD.replace(
                "{ op = \"write\", size = \"$size\" }",
                "{ op = \"think\", time = \"1ms\" }",
            ),
            "11:12",
            "a timed transaction of think flowops alone",
        ),
        (
            "bad-flowop",
            GOOD.replace("\"write\"", "\"wirte\""),
            "12:19",
            "did you mean 'write'?",
        ),
    ];
    for (name, text, at, says) in cases {
        let f = dir.path().join(format!("{name}.toml"));
        std::fs::write(&f, text).unwrap();
        let path = f.display().to_string();
        let out = run(&["profile", "check", &path], 30);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("{path}:{at}: ")), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

#[test]
fn a_set_the_profile_does_not_use_is_refused() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/netperf-rr.toml");
    let out = run(
        &[
            "profile",
            "check",
            &f.display().to_string(),
            "--set",
            "thread=4",
        ],
        30,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean 'threads'?"),
        "{}",
        stderr(&out)
    );
}

/// The shipped profiles `profile run` can carry on loopback.
const RUNNABLE: &[&str] = &[
    "crr",
    "many-flows",
    "netperf-rr",
    "netperf-stream",
    "rr-payloads",
    "socket-buffers",
    "two-hosts",
    "write-size",
    "udp-small",
    "rrul",
    "streams-to-line-rate",
];

#[test]
fn shipped_profiles_run_their_quick_form() {
    for name in RUNNABLE {
        let path = format!("{}/profiles/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let out = run(
            &["profile", "run", &path, "--set", "duration=300ms", "--json"],
            60,
        );
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["totals"]["failed"], 0, "{name}");
        assert!(doc["totals"]["iterations"].as_u64().unwrap() > 0, "{name}");
    }
}

#[test]
fn profile_run_moves_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let exact = dir.path().join("exact.toml");
    std::fs::write(
        &exact,
        "name = \"exact\"\n[[group]]\nthreads = 2\n[[group.transaction]]\n\
         flowops = [{ op = \"connect\" }]\n[[group.transaction]]\niterations = 10\n\
         flowops = [{ op = \"write\", size = \"64K\" }, { op = \"read\", size = 100 }]\n",
    )
    .unwrap();
    let path = exact.display().to_string();
    let out = run(&["profile", "run", &path, "--json"], 60);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &doc["totals"];
    // Each flow: its connect transaction (one iteration), then ten.
    assert_eq!(t["iterations"], 2 * (1 + 10));
    assert_eq!(t["client_sent"], 2 * 10 * 65_536);
    assert_eq!(t["server_received"], 2 * 10 * 65_536);
    assert_eq!(t["server_sent"], 2 * 10 * 100);
    assert_eq!(t["client_received"], 2 * 10 * 100);
}
