//! The side-by-side bench scripts' scheduling (`bench/peers.py`): with the kernel's autogroup on,
//! nice counts only inside a session, so a bench moves into a session of its own and raises that
//! session's group to nice -20; builds at nice 19 in other sessions then yield to it.

use std::process::Command;

/// The autogroup line of `/proc/<pid>/autogroup`: "/autogroup-N nice K".
fn autogroup(line: &str) -> (&str, &str) {
    line.trim().split_once(" nice ").expect("an autogroup line")
}

#[test]
fn a_bench_takes_a_scheduling_group_of_its_own() {
    let on = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|v| v.trim() == "1");
    let script = "import sys; sys.path.insert(0, 'bench'); import peers; \
                  print(peers.own_sched_group()); \
                  print(open('/proc/self/autogroup').read().strip())";
    let out = Command::new("python3")
        .args(["-c", script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("BENCH_SHARED_CPU")
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = text.lines();
    let said = lines.next().expect("what was done");
    if !on {
        assert!(said.contains("no autogroup"), "{said}");
        return;
    }
    let (theirs, nice) = autogroup(lines.next().expect("its autogroup"));
    let ours = std::fs::read_to_string("/proc/self/autogroup").expect("our autogroup");
    // A process in PID 1's autogroup (CI's test runner) reads an empty file: the root group.
    if let Some((ours, _)) = ours.trim().split_once(" nice ") {
        assert_ne!(theirs, ours, "a session of its own: {said}");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(nice, "-20", "{said}");
    } else {
        assert!(said.contains("not raised"), "{said}");
    }
}
