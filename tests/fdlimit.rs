//! The open-files limit: a test that needs more descriptors than the process may open is refused
//! before anything opens, with one line naming RLIMIT_NOFILE and what would lift it.

mod common;
use common::*;
use std::os::unix::process::CommandExt;
use std::process::Stdio;

/// CAP_SYS_RESOURCE (linux/capability.h).
const CAP_SYS_RESOURCE: libc::c_ulong = 24;

/// Runs fathom with its open-files limit at `n` (soft and hard) and without the privilege to
/// raise the hard limit (CAP_SYS_RESOURCE dropped from the bounding set, which fails harmlessly
/// where the test already lacks it).
fn run_limited(n: u64, args: &[&str]) -> std::process::Output {
    let mut cmd = fathom();
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls (setrlimit, prctl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_RESOURCE, 0, 0, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().expect("spawn fathom");
    child.wait_with_output().expect("output")
}

#[test]
fn too_many_flows_for_the_hard_limit_name_it() {
    let out = run_limited(200, &["stream", "-P", "100", "-t", "0.1s", "--no-store"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("100 flows with both ends in this process needs about 264 open files, but this process may open 200 (RLIMIT_NOFILE)"),
        "{err}"
    );
    assert!(err.contains("CAP_SYS_RESOURCE"), "{err}");
    assert!(err.contains("fathom serve"), "{err}");
}

#[test]
fn the_refusal_is_one_json_document() {
    let out = run_limited(
        128,
        &["stream", "-P", "100", "-t", "0.1s", "--json", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    let e = doc["error"].as_str().unwrap_or_default();
    assert!(e.contains("RLIMIT_NOFILE"), "{doc}");
}

#[test]
fn what_fits_under_the_limit_runs() {
    let out = run_limited(128, &["stream", "-P", "30", "-t", "0.1s", "--no-store"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
