//! What the advisor's lab tests share: a two-host lab made with `fathom lab up` and removed by
//! a guard (panics included), one at a time, named with the pid; and the first finding of a
//! document.
#![allow(dead_code)]

use crate::common::{json, root_or_ci, run, run_ok, stderr};
use serde_json::Value;
use std::sync::{Mutex, MutexGuard};

/// One lab at a time: the machine is small.
static ONE_LAB: Mutex<()> = Mutex::new(());

/// Runs `fathom ARGS` (bounded) and returns its one JSON document, failing with its stderr.
pub fn doc(args: &[&str], secs: u64) -> Value {
    let out = run(args, secs);
    assert!(out.status.success(), "fathom {args:?}: {}", stderr(&out));
    json(&out)
}

/// The advice of a report, its first finding's id, and that finding.
pub fn first(d: &Value) -> (&str, &Value) {
    let advice = d["advice"].as_array().expect("an advice member");
    let a = advice.first().unwrap_or_else(|| panic!("no finding: {d}"));
    (a["id"].as_str().unwrap(), a)
}

/// A lab made with `fathom lab up`; `fathom lab down` when dropped, panics included.
pub struct Lab {
    /// Its name.
    pub name: String,
    _one: MutexGuard<'static, ()>,
}

impl Lab {
    /// A two-host lab named for this process and `tag`, with `wan` on its link (none: a veth);
    /// None without root (the test skips, saying so; see [`root_or_ci`]).
    pub fn up(tag: &str, wan: Option<&str>) -> Option<Lab> {
        if !root_or_ci() {
            return None;
        }
        let wan: Vec<&str> = wan.map(|w| vec!["--wan", w]).unwrap_or_default();
        Some(Lab::up_with(tag, &wan))
    }

    /// A two-host lab named for this process and `tag`, with `extra` options to `lab up`.
    pub fn up_with(tag: &str, extra: &[&str]) -> Lab {
        let one = ONE_LAB.lock().unwrap_or_else(|p| p.into_inner());
        let lab = Lab {
            name: format!("ta{}{tag}", std::process::id()),
            _one: one,
        };
        let mut args = vec!["lab", "up", "--name", &lab.name, "--hosts", "2"];
        args.extend(extra);
        let out = run(&args, 60);
        assert!(out.status.success(), "lab up: {}", stderr(&out));
        lab
    }

    /// `args` with `--server h2 --clients h1 --lab NAME` after them: the agents of h1 and h2
    /// run the test, so the report holds the lab's WAN links.
    pub fn across<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = args.to_vec();
        all.extend(["--server", "h2", "--clients", "h1", "--lab", &self.name]);
        all
    }

    /// `fathom ARGS --server h2 --clients h1 --lab NAME --no-store --json --advise`.
    pub fn advise(&self, args: &[&str], secs: u64) -> Value {
        let mut all = self.across(args);
        all.extend(["--no-store", "--json", "--advise"]);
        doc(&all, secs)
    }

    /// Runs `args` (written as typed) with `--advise`, as [`Lab::advise`] does, and asserts
    /// that its first finding is `id`: that finding.
    pub fn finding(&self, args: &str, secs: u64, id: &str) -> Value {
        let d = self.advise(&args.split_whitespace().collect::<Vec<_>>(), secs);
        let (first_id, a) = first(&d);
        assert_eq!(first_id, id, "{a}");
        a.clone()
    }

    /// The pid of host `host`'s agent (`fathom lab status`).
    pub fn agent_pid(&self, host: &str) -> u32 {
        let status = doc(&["lab", "status", "--name", &self.name, "--json"], 30);
        let hosts = status["hosts"].as_array().expect("hosts");
        let h = hosts
            .iter()
            .find(|h| h["name"] == host)
            .unwrap_or_else(|| panic!("no host {host}: {status}"));
        h["agent"]["pid"].as_u64().expect("an agent pid") as u32
    }

    /// Runs `args` from h1 to h2 (stored in a store of its own), then `fathom doctor --run 1
    /// --verify --iterations 2 --json` on it: the doctor's document, and the stored run's own
    /// (`fathom show 1 --json`), for the figures a failed assertion should print.
    pub fn verified(&self, args: &[&str]) -> (Value, Value) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.db").to_string_lossy().into_owned();
        let mut all = self.across(&[args, &["-q"]].concat());
        all.extend(["--store", &db]);
        run_ok(&all, 90);
        let stored = doc(&["show", "1", "--json", "--store", &db], 30);
        let verify = ["--verify", "--iterations", "2", "--json"];
        let doctor = doc(
            &[&["doctor", "--run", "1", "--store", &db][..], &verify].concat(),
            240,
        );
        (doctor, stored)
    }
}

/// A finding's change (what to do), as text.
pub fn change(a: &Value) -> &str {
    a["change"]
        .as_str()
        .unwrap_or_else(|| panic!("no change: {a}"))
}

/// What a stored run measured, for an assertion's message: the rate, bytes and span, the TLS
/// section, and each host's CPUs and worker threads.
pub fn measured(run: &Value) -> String {
    let s = &run["summary"];
    let hosts: Vec<String> = run["hosts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|h| {
            format!(
                "{}: cpu {} threads {}",
                h["name"], h["cpu"]["per_cpu"], h["threads"]
            )
        })
        .collect();
    format!(
        "the run stored {} bit/s, {} bytes received in {} s; tls {}; {}",
        s["bits_per_second"],
        s["bytes"],
        s["seconds"],
        s["tls"],
        hosts.join("; ")
    )
}

impl Drop for Lab {
    fn drop(&mut self) {
        let out = run(&["lab", "down", "--name", &self.name], 60);
        if !out.status.success() {
            eprintln!("lab down {}: {}", self.name, stderr(&out));
        }
    }
}
