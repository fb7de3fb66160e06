//! `fathom key new FILE`: a random key, readable only by its owner, never over an existing file,
//! that an agent and a controller then share.

mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_new_key_is_private_random_hex_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for f in [&a, &b] {
        run_ok(&["key", "new", f.to_str().unwrap()], 10);
    }
    let key = std::fs::read_to_string(&a).unwrap();
    assert_eq!(key.len(), 64, "{key}");
    assert!(key.bytes().all(|c| c.is_ascii_hexdigit()), "{key}");
    assert_ne!(key, std::fs::read_to_string(&b).unwrap(), "random");
    let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let again = run(&["key", "new", a.to_str().unwrap()], 10);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), key, "left as it was");
}

#[test]
fn an_agent_and_a_controller_share_a_new_key() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k");
    let k = k.to_str().unwrap();
    assert!(run(&["key", "new", k], 10).status.success());
    let agent = Agent::start(&["--key-file", k]);
    let target = agent.target();
    run_ok(
        &["rr", &target, "-n", "100", "--key-file", k, "--no-store"],
        60,
    );
    let without = run(&["rr", &target, "-n", "100", "--no-store"], 60);
    assert!(!without.status.success());
    assert!(
        stderr(&without).contains("--key-file"),
        "{}",
        stderr(&without)
    );
}
