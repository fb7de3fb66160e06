//! Bad input: one line naming the problem, exit 2 for usage and 1 for runtime, never a panic.

mod common;
use common::*;

fn check(args: &[&str], code: i32, needle: &str) {
    let out = run(args, 30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    check(&["stream", "-P", "0"], 2, "--parallel");
    check(&["stream", "--buffer", "1x"], 2, "'1x' is not a size");
    check(&["stream", "--write", "0"], 2, "--write");
    check(&["stream", "-t", "-1"], 2, "negative");
    check(&["stream", "-t", "0"], 2, "--time");
    check(&["stream", "-n", "1M", "--omit", "1s"], 2, "--omit");
    check(&["stream", "--affinity", "x"], 2, "CPU list");
    check(&["stream", "--nosuch"], 2, "--nosuch");
    check(&["stream", "-P", "-1"], 2, "--parallel");
}

#[test]
fn runtime_errors_exit_1_with_one_line() {
    check(
        &["stream", "no-such-host.invalid"],
        1,
        "no-such-host.invalid",
    );
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    check(&["stream", &format!("127.0.0.1:{port}")], 1, "refused");
    check(
        &["stream", "--key-file", "/nonexistent/key"],
        2,
        "/nonexistent/key",
    );
}

#[test]
fn json_errors_are_one_json_document() {
    for args in [
        &["stream", "-P", "0", "--json"][..],
        &["stream", "127.0.0.1:1", "--json"],
    ] {
        let out = run(args, 30);
        let j = json(&out);
        assert!(j["error"].as_str().is_some_and(|e| !e.is_empty()), "{j}");
    }
}
