//! The lab helpers of the tests that run the real fathom binary across the lab's WAN emulator
//! (`tests/wan.rs`, `tests/wan_udp.rs`): a two-host lab with an emulator between its hosts,
//! made with `fathom lab up` and removed through a guard even when a test fails, one at a time.
#![allow(dead_code)]

use crate::common::run_program as run;
use std::process::Output;
use std::sync::{Mutex, MutexGuard};

pub const FATHOM: &str = env!("CARGO_BIN_EXE_fathom");

/// h2's address in a `--hosts 2` lab.
pub const H2: &str = "10.77.0.2";

/// One lab at a time: round trips and rates are measured, and the machine is small.
static ONE_LAB: Mutex<()> = Mutex::new(());

/// True when running as root; otherwise says on stderr that `test` is skipped.
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("SKIP {test}: needs root to create network namespaces");
    }
    root
}

/// Runs `fathom ARGS` (bounded), panicking with its stderr unless it exits 0; returns stdout.
pub fn fathom_ok(args: &[&str], secs: u64) -> String {
    let out = run(FATHOM, args, secs);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        out.status.success(),
        "fathom {args:?}: {}{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    text(&out.stdout)
}

/// A lab made with `fathom lab up`; `fathom lab down` when dropped, panics included.
pub struct TestLab {
    /// The lab's name (`--name`).
    pub name: String,
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl TestLab {
    /// `fathom lab up --hosts 2 --wan WAN` under a name unique to this process and `tag`.
    pub fn up(tag: &str, wan: &str) -> TestLab {
        let lock = ONE_LAB
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let lab = TestLab {
            name: format!("tw{}-{tag}", std::process::id()),
            _one_at_a_time: lock,
        };
        let out = fathom_ok(
            &[
                "lab", "up", "--name", &lab.name, "--hosts", "2", "--wan", wan,
            ],
            60,
        );
        assert!(out.contains("WAN link h1-h2"), "{out}");
        lab
    }

    /// The file holding the lab's agents' key.
    pub fn key_file(&self) -> String {
        format!("/run/fathom/lab/{}/key", self.name)
    }

    /// Changes the WAN link in both directions.
    pub fn set_wan(&self, params: &str) {
        fathom_ok(
            &["lab", "wan", "set", "--name", &self.name, "h1-h2", params],
            30,
        );
    }

    /// `fathom lab exec h1 -- PROGRAM ARGS`, bounded.
    pub fn exec_h1(&self, program: &str, args: &[&str], secs: u64) -> Output {
        let mut all = vec!["lab", "exec", "--name", &self.name, "h1", "--", program];
        all.extend_from_slice(args);
        run(FATHOM, &all, secs)
    }

    /// Runs a fathom test from h1 against h2's agent and returns its JSON document.
    pub fn fathom_from_h1(&self, args: &[&str], secs: u64) -> serde_json::Value {
        let key = self.key_file();
        let mut all = args.to_vec();
        all.extend_from_slice(&[H2, "--key-file", &key, "--json"]);
        let out = self.exec_h1(FATHOM, &all, secs);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "fathom {args:?}: not one JSON document ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert!(doc["error"].is_null(), "fathom {args:?}: {}", doc["error"]);
        doc
    }

    /// `fathom lab status --json`.
    pub fn status(&self) -> serde_json::Value {
        let out = fathom_ok(&["lab", "status", "--name", &self.name, "--json"], 30);
        serde_json::from_str(&out).unwrap()
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let out = run(FATHOM, &["lab", "down", "--name", &self.name], 60);
        if !out.status.success() {
            eprintln!(
                "cleanup of lab {}: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
