//! `fathom lab` through its clap types and `cli::run`, with the stand-in agent as the fathom
//! binary.

mod common;

use std::path::Path;

use clap::{CommandFactory, Parser};
use common::*;
use fathom_lab::cli::{run, LabArgs};

/// `fathom lab …` as the binary will parse it.
#[derive(Parser)]
#[command(name = "fathom")]
enum Fathom {
    Lab(LabArgs),
}

fn parse(args: &[&str]) -> anyhow::Result<LabArgs> {
    let Fathom::Lab(parsed) = Fathom::try_parse_from(["fathom", "lab"].iter().chain(args))?;
    Ok(parsed)
}

/// Runs `fathom lab ARGS` with the stand-in agent.
fn lab(args: &[&str]) -> anyhow::Result<i32> {
    run(parse(args)?, standin_exe())
}

/// Runs `fathom lab ARGS` that must fail before any agent starts.
fn refused(args: &[&str]) -> String {
    let code = run(parse(args).unwrap(), Path::new("/nonexistent/fathom"));
    code.expect_err("should be refused").to_string()
}

#[test]
fn the_command_line_is_consistent() {
    Fathom::command().debug_assert();
    assert!(
        Fathom::try_parse_from(["fathom", "lab", "up"]).is_err(),
        "up needs --hosts or a file"
    );
    assert!(Fathom::try_parse_from(["fathom", "lab", "up", "--hosts", "2", "t.toml"]).is_err());
    assert!(Fathom::try_parse_from(["fathom", "lab", "up", "t.toml", "--rate", "1G"]).is_err());
    assert!(
        Fathom::try_parse_from(["fathom", "lab", "exec", "h1"]).is_err(),
        "exec needs a command"
    );
    assert!(
        Fathom::try_parse_from(["fathom", "lab", "exec", "h1", "--", "ip", "-br", "addr"]).is_ok()
    );
    let parses =
        |args: &[&str]| Fathom::try_parse_from(["fathom", "lab"].iter().chain(args)).is_ok();
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
fn up_status_exec_down_from_the_command_line() {
    if !root_or_skip("up_status_exec_down_from_the_command_line") {
        return;
    }
    let name = unique_name("cli");
    let _guard = LabGuard(name.clone());
    assert_eq!(
        lab(&["up", "--hosts", "2", "--name", &name, "--rate", "1G"]).unwrap(),
        0
    );
    assert_eq!(lab(&["status", "--name", &name]).unwrap(), 0);
    assert_eq!(lab(&["status", "--name", &name, "--json"]).unwrap(), 0);
    assert_eq!(
        lab(&["exec", "--name", &name, "h2", "--", "ip", "-br", "addr"]).unwrap(),
        0
    );
    assert_eq!(
        lab(&["exec", "--name", &name, "h1", "--", "sh", "-c", "exit 3"]).unwrap(),
        3
    );
    assert_eq!(lab(&["down", "--name", &name]).unwrap(), 0);
    assert_eq!(
        lab(&["status", "--name", &name, "--json"]).unwrap(),
        1,
        "JSON errors are a document"
    );
    let err = lab(&["status", "--name", &name]).unwrap_err().to_string();
    assert!(err.contains(&format!("no lab named '{name}'")), "{err}");
}

#[test]
fn bad_input_is_refused_before_anything_is_made() {
    let err = refused(&["up", "--hosts", "2", "--rate", "fast"]);
    assert!(err.contains("rate 'fast'"), "{err}");
    let err = refused(&["up", "--hosts", "2", "--name", "bad name"]);
    let expected = ["lab name 'bad name'", "needs root"];
    assert!(expected.iter().any(|e| err.contains(e)), "{err}");
    let err = refused(&["up", "/nonexistent/topology.toml"]);
    assert!(err.contains("/nonexistent/topology.toml"), "{err}");
}
