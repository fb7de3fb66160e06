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

#[test]
fn up_status_exec_down_from_the_command_line() {
    if !root_or_ci() {
        return;
    }
    let name = format!("cli{}", std::process::id());
    let _down = Down(name.clone());
    let (code, out, err) = lab(&["up", "--hosts", "2", "--name", &name, "--rate", "1G"]);
    assert_eq!(code, 0, "{err}");
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
    let _down = (Down(a.clone()), Down(b.clone()));
    let (code, _, err) = lab(&["up", "--hosts", "2", "--wan", "delay=1ms", "--name", &a]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = lab(&["up", "--hosts", "2", "--name", &b]);
    assert_eq!(code, 0, "{err}");
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
