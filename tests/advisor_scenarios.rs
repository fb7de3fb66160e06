//! The advisor's scenarios (issue 26): each builds a cause on purpose, on loopback or in a lab
//! whose WAN emulator makes it, runs the test with `--advise`, and asserts the first finding's
//! cause and the figure it cites, never a speed. Lab scenarios need root (they skip without it,
//! except under CI); each lab is named with the pid, made one at a time, and removed by a guard
//! even when the test fails. bench/RESULTS-advisor.md records what each gave.

mod common;

use common::{json, root_or_ci, run, stderr};
use serde_json::Value;
use std::sync::{Mutex, MutexGuard};

/// One lab at a time: the machine is small.
static ONE_LAB: Mutex<()> = Mutex::new(());

/// Runs `fathom ARGS` (bounded) and returns its one JSON document, failing with its stderr.
fn doc(args: &[&str], secs: u64) -> Value {
    let out = run(args, secs);
    assert!(out.status.success(), "fathom {args:?}: {}", stderr(&out));
    json(&out)
}

/// The advice of a report, its first finding's id, and that finding.
fn first(d: &Value) -> (&str, &Value) {
    let advice = d["advice"].as_array().expect("an advice member");
    let a = advice.first().unwrap_or_else(|| panic!("no finding: {d}"));
    (a["id"].as_str().unwrap(), a)
}

/// A lab made with `fathom lab up`; `fathom lab down` when dropped, panics included.
struct Lab {
    name: String,
    _one: MutexGuard<'static, ()>,
}

impl Lab {
    /// A two-host lab named for this process and `tag`, with `wan` on its link (none: a veth).
    fn up(tag: &str, wan: Option<&str>) -> Lab {
        let one = ONE_LAB.lock().unwrap_or_else(|p| p.into_inner());
        let lab = Lab {
            name: format!("ta{}{tag}", std::process::id()),
            _one: one,
        };
        let mut args = vec!["lab", "up", "--name", &lab.name, "--hosts", "2"];
        if let Some(w) = wan {
            args.extend(["--wan", w]);
        }
        let out = run(&args, 60);
        assert!(out.status.success(), "lab up: {}", stderr(&out));
        lab
    }

    /// `fathom ARGS --server h2 --clients h1 --lab NAME --no-store --json --advise`: the agents
    /// of h1 and h2 run the test, so the report holds the lab's WAN links.
    fn advise(&self, args: &[&str], secs: u64) -> Value {
        let mut all = args.to_vec();
        all.extend(["--server", "h2", "--clients", "h1", "--lab", &self.name]);
        all.extend(["--no-store", "--json", "--advise"]);
        doc(&all, secs)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let out = run(&["lab", "down", "--name", &self.name], 60);
        if !out.status.success() {
            eprintln!("lab down {}: {}", self.name, stderr(&out));
        }
    }
}

#[test]
fn a_healthy_loopback_stream_gives_notes_at_most() {
    let d = doc(
        &["stream", "-t", "1", "--no-store", "--json", "--advise"],
        60,
    );
    let advice = d["advice"].as_array().expect("an advice member");
    assert!(advice.iter().all(|a| a["severity"] == "note"), "{advice:?}");
}

/// net.core.rmem_max is not per namespace, so the low value is read from a fake root, as the
/// settings tests do, while the run itself asked for 1 MB on loopback.
#[test]
fn rmem_max_below_the_requested_buffer_is_the_clamp() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db").to_string_lossy().into_owned();
    let core = dir.path().join("root/proc/sys/net/core");
    std::fs::create_dir_all(&core).unwrap();
    std::fs::write(core.join("rmem_max"), "212992\n").unwrap();
    std::fs::write(core.join("wmem_max"), "212992\n").unwrap();
    let out = run(
        &[
            "stream", "-t", "300ms", "-q", "--buffer", "1M", "--store", &db,
        ],
        60,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let root = dir.path().join("root").to_string_lossy().into_owned();
    let d = doc(
        &[
            "doctor", "--run", "1", "--store", &db, "--root", &root, "--json",
        ],
        30,
    );
    let (id, a) = first(&d);
    assert_eq!(id, "buffer_clamped", "{a}");
    assert_eq!(a["figures"]["requested_bytes"], 1_048_576.0);
    assert!(
        a["change"]
            .as_str()
            .unwrap()
            .contains("net.core.rmem_max=1048576"),
        "{a}"
    );
}

#[test]
fn a_tiny_udp_receive_buffer_drops_in_the_socket() {
    let d = doc(
        &[
            "udp",
            "-t",
            "1",
            "--size",
            "1400",
            "--buffer",
            "4K",
            "--no-store",
            "--json",
            "--advise",
        ],
        60,
    );
    let (id, a) = first(&d);
    assert_eq!(id, "udp_socket_buffer", "{a}");
    assert!(a["figures"]["rcvbuf_errors"].as_f64().unwrap() > 0.0, "{a}");
}

#[test]
fn a_48k_buffer_across_100_ms_is_the_receive_window() {
    if !root_or_ci() {
        return;
    }
    let lab = Lab::up("win", Some("delay=50ms"));
    let d = lab.advise(&["stream", "-t", "3", "--omit", "1", "--buffer", "48K"], 90);
    let (id, a) = first(&d);
    assert_eq!(id, "receive_window", "{a}");
    assert!(a["figures"]["rtt_us"].as_f64().unwrap() >= 100_000.0, "{a}");
    assert!(
        a["change"].as_str().unwrap().starts_with("--buffer "),
        "{a}"
    );
}

#[test]
fn one_percent_loss_on_the_wan_link_is_loss_on_the_path() {
    if !root_or_ci() {
        return;
    }
    let lab = Lab::up("loss", Some("delay=10ms,loss=1%"));
    let d = lab.advise(&["stream", "-t", "3"], 90);
    let (id, a) = first(&d);
    assert_eq!(id, "path_loss", "{a}");
    assert!(a["figures"]["retransmits"].as_f64().unwrap() > 0.0, "{a}");
    assert_eq!(a["figures"]["wan_loss_pct"], 1.0, "{a}");
}

#[test]
fn open_loop_rr_with_nagle_across_10_ms_is_nagle() {
    if !root_or_ci() {
        return;
    }
    let lab = Lab::up("rr", Some("delay=5ms"));
    let d = lab.advise(&["rr", "-t", "2", "--rate", "100", "--size", "64,64"], 60);
    let (id, a) = first(&d);
    assert_eq!(id, "nagle_delayed_ack", "{a}");
    assert!(
        a["change"].as_str().unwrap().starts_with("--nodelay"),
        "{a}"
    );
}

#[test]
fn a_receiver_pinned_to_the_cpu_it_fills_is_cpu_bound_there() {
    if !root_or_ci() {
        return;
    }
    let lab = Lab::up("cpu", None);
    let d = lab.advise(&["stream", "-t", "2", "--affinity", "0/0"], 60);
    let (id, a) = first(&d);
    assert_eq!(id, "cpu_bound", "{a}");
    assert_eq!(a["figures"]["cpu"], 0.0, "{a}");
    assert_eq!(a["severity"], "warning", "{a}");
}
