//! `fathom lab` through the binary: the command line's rules, refusals before anything is made,
//! and up, status, exec and down on a real lab (root; without it that test prints SKIP).

mod common;
use clap::{CommandFactory, Parser};
use common::*;
use fathom::cli::Cli;

fn parses(args: &[&str]) -> bool {
    Cli::try_parse_from(["fathom", "lab"].iter().chain(args)).is_ok()
}

#[test]
fn the_command_line_is_consistent() {
    Cli::command().debug_assert();
    assert!(!parses(&["up"]), "up needs --hosts or a file");
    assert!(!parses(&["up", "--hosts", "2", "t.toml"]));
    assert!(!parses(&["up", "t.toml", "--rate", "1G"]));
    assert!(!parses(&["exec", "h1"]), "exec needs a command");
    assert!(parses(&["exec", "h1", "--", "ip", "-br", "addr"]));
    assert!(parses(&[
        "up",
        "--hosts",
        "4",
        "--wan",
        "delay=5ms,rate=1G"
    ]));
    assert!(
        !parses(&["up", "t.toml", "--wan", "delay=5ms"]),
        "--wan goes with --hosts"
    );
    assert!(parses(&[
        "wan",
        "set",
        "h1-h2",
        "delay=5ms",
        "loss=1%",
        "--direction",
        "b-to-a"
    ]));
    assert!(!parses(&["wan", "set", "h1-h2"]), "set needs parameters");
    assert!(!parses(&[
        "wan",
        "set",
        "h1-h2",
        "delay=1ms",
        "--direction",
        "up"
    ]));
}

#[test]
fn bad_input_is_refused_before_anything_is_made() {
    let (code, _, err) = lab(&["up", "--hosts", "2", "--rate", "fast", "--name", "clibad"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("rate 'fast'"), "{err}");
    let (_, _, err) = lab(&["up", "--hosts", "2", "--name", "bad name"]);
    let expected = ["lab name 'bad name'", "needs root"];
    assert!(expected.iter().any(|e| err.contains(e)), "{err}");
    let (code, _, err) = lab(&["up", "/nonexistent/topology.toml"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/topology.toml"), "{err}");
}

/// Removes the lab when dropped, also when the test fails.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = lab(&["down", "--name", &self.0]);
    }
}

/// `lab up --hosts 2 ARGS --name NAME`, asserting that the lab came up: its guard and what
/// `up` printed.
fn up(name: &str, args: &[&str]) -> (Down, String) {
    let down = Down(name.to_string());
    let (code, out, err) = lab(&[&["up", "--hosts", "2"][..], args, &["--name", name]].concat());
    assert_eq!(code, 0, "{err}");
    (down, out)
}

#[test]
fn up_status_exec_down_from_the_command_line() {
    if !root_or_ci() {
        return;
    }
    let name = format!("cli{}", std::process::id());
    let (_down, out) = up(&name, &["--rate", "1G"]);
    assert!(
        out.contains(&format!("lab '{name}' is up in ")) && out.contains(": 2 hosts ("),
        "the name quoted, so that a lab named lab reads well: {out}"
    );
    let (code, out, _) = lab(&["status", "--name", &name]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(ok)") && out.contains("1G"), "{out}");
    let (code, out, _) = lab(&["status", "--name", &name, "--json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema_version"], 2);
    let (code, _, err) = lab(&["exec", "--name", &name, "h2", "--", "ip", "-br", "addr"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, _) = lab(&["exec", "--name", &name, "h1", "--", "sh", "-c", "exit 3"]);
    assert_eq!(code, 3);
    let (code, out, err) = lab(&["down", "--name", &name]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("lab '{name}' removed: ")) && out.contains(" agents"),
        "{out}"
    );
    let (code, out, _) = lab(&["status", "--name", &name, "--json"]);
    assert_eq!(code, 1, "JSON errors are a document");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        doc["error"].as_str().unwrap().contains("no lab named"),
        "{out}"
    );
    let (code, _, err) = lab(&["status", "--name", &name]);
    assert_eq!(code, 1);
    assert!(err.contains(&format!("no lab named '{name}'")), "{err}");
}

#[test]
fn two_labs_make_host_names_ambiguous_and_bad_wan_parameters_are_usage() {
    if !root_or_ci() {
        return;
    }
    let (a, b) = (
        format!("amb{}a", std::process::id()),
        format!("amb{}b", std::process::id()),
    );
    let _down = (up(&a, &["--wan", "delay=1ms"]), up(&b, &[]));
    for (param, needle) in [
        ("dealy=5ms", "unknown key 'dealy'"),
        ("loss=150%", "'150%'"),
        ("rate=-1G", "rates are positive"),
    ] {
        let (code, _, err) = lab(&["wan", "set", "--name", &a, "h1-h2", param]);
        assert_eq!(code, 2, "{param}: {err}");
        assert!(err.contains(needle), "{param}: {err}");
    }
    let out = run(
        &["stream", "--server", "h1", "--clients", "h2", "-t", "1"],
        60,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("several labs are running"), "{err}");
    assert!(err.contains("--lab"), "{err}");
    let out = run(
        &[
            "stream",
            "--lab",
            &b,
            "--server",
            "h1",
            "--clients",
            "h2",
            "-t",
            "1",
        ],
        60,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn the_help_holds_the_topology_reference_and_wan_examples() {
    let help = |args: &[&str]| String::from_utf8_lossy(&run(args, 30).stdout).into_owned();
    let up = help(&["lab", "up", "--help"]);
    for needle in [
        "[[host]]",
        "[[switch]]",
        "[[link]]",
        "[[wan]]",
        "a_to_b",
        "Rules",
    ] {
        assert!(
            up.contains(needle),
            "{needle} missing from lab up --help: {up}"
        );
    }
    assert!(!up.contains("README"), "{up}");
    assert!(help(&["lab", "up", "-h"]).contains("`fathom lab up --help` describes them"));
    let wan = help(&["lab", "wan", "--help"]);
    assert!(
        wan.contains("Examples:\n  fathom lab wan set h1-h2"),
        "{wan}"
    );
}

/// The WAN link's parameters of lab `name`, per direction.
fn wan_params(name: &str) -> (String, String) {
    let (code, out, err) = lab(&["status", "--name", name, "--json"]);
    assert_eq!(code, 0, "{err}{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let p = &doc["wan"][0]["params"];
    let text = |d: &str| p[d].as_str().unwrap_or_default().to_string();
    (text("a_to_b"), text("b_to_a"))
}

#[test]
fn a_sweep_of_rtt_puts_the_lab_links_back_when_it_ends_or_is_stopped() {
    if !root_or_ci() {
        return;
    }
    let name = format!("rst{}", std::process::id());
    let _down = up(&name, &["--wan", "delay=10ms"]);
    let (code, _, err) = lab(&[
        "wan",
        "set",
        "--name",
        &name,
        "h1-h2",
        "delay=20ms",
        "--direction",
        "b-to-a",
    ]);
    assert_eq!(code, 0, "{err}");
    let before = wan_params(&name);
    assert!(before.0.starts_with("delay=10ms,"), "{before:?}");
    assert!(before.1.starts_with("delay=20ms,"), "{before:?}");
    let sweep = [
        "sweep",
        "stream",
        "--lab",
        &name,
        "--server",
        "h1",
        "--clients",
        "h2",
        "-t",
        "1s",
        "--vary",
        "rtt=0ms,50ms",
        "--no-store",
    ];
    let log = run_exit(&sweep, 120, 0);
    assert!(log.contains("WAN links put back"), "{log}");
    assert_eq!(wan_params(&name), before, "after a finished sweep");

    let mut child = fathom()
        .args(sweep)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("[1/2]") {
        line.clear();
        assert!(std::io::BufRead::read_line(&mut log, &mut line).unwrap() > 0);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: interrupts the child we spawned, by its PID, as Ctrl-C would.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a stopped sweep is unfinished");
    assert_eq!(wan_params(&name), before, "after a sweep stopped by Ctrl-C");
}

#[test]
fn a_lab_made_with_files_root_serves_the_readme_file_copy_and_down_removes_it() {
    if !root_or_ci() {
        return;
    }
    let name = format!("fr{}", std::process::id());
    let (down, out) = up(&name, &["--files-root"]);
    let root = std::path::Path::new("/var/tmp/fathom-lab").join(&name);
    assert!(out.contains(&format!("{}/HOST", root.display())), "{out}");
    let copy = format!("file put --size 1M :x --server h2 --clients h1 --lab {name} --no-store");
    let out = run(&words(&copy), 120);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let copied = std::fs::metadata(root.join("h2/x")).map(|m| m.len());
    assert_eq!(
        copied.ok(),
        Some(1 << 20),
        "the copy landed in h2's scratch directory"
    );
    drop(down);
    assert!(!root.exists(), "lab down removes {}", root.display());
}
