//! A mesh test's command, read as the command line reads it: the same clap parser and the
//! same plan validation, so `command = "rr --size 0"` is refused in the file as `fathom rr
//! --size 0` is. The mesh fills in the ends and the output, so the flags that name them are
//! refused, as are counted limits (a slot needs a length).

use crate::cli::error::one_line;
use crate::cli::test_args::TestArgs;
use crate::cli::{Cli, Command};
use clap::Parser;
use fathom_mesh::file::{Checked, Commands};
use fathom_proto::plan::{Limit, TestPlan};

/// The flags a mesh sets itself, and why.
const REFUSED: &[(&str, &str)] = &[
    ("--server", "the mesh names the ends"),
    ("--clients", "the mesh names the ends"),
    ("--lab", "[members] lab names the lab"),
    ("--agents-from", "[members] from finds the members"),
    (
        "--key-file",
        "[mesh] key_file or `mesh run --key-file` gives the key",
    ),
    ("--json", "the mesh keeps every result in the store"),
    ("--csv", "the mesh keeps every result in the store"),
    ("--store", "`mesh run --store` names the store"),
    ("--no-store", "the mesh keeps every result in the store"),
    ("--iterations", "the mesh repeats the test on its schedule"),
    ("--confidence", "the mesh repeats the test on its schedule"),
    ("--advise", "the mesh only measures"),
    ("--iperf3", "a mesh test runs between fathom agents"),
    ("--compare-clear", "a mesh test is one test"),
];

/// The command line's check of a mesh test's command.
pub struct CliCommands;

impl Commands for CliCommands {
    fn check(&self, words: &[String]) -> Result<Checked, String> {
        let (test, plan) = parse(words)?;
        let length_ns = match plan.limit {
            Limit::Time { duration_ns } => plan.omit_ns.saturating_add(duration_ns),
            _ => {
                return Err(format!(
                    "{}: a mesh test runs for a time (-t), so that its slot has a length",
                    test.flag_of("limit.bytes")
                ))
            }
        };
        Ok(Checked {
            kind: test.kind().descriptor().command.to_string(),
            length_ns,
        })
    }
}

/// The test `words` stand for and its validated plan; the error names the flag at fault.
pub fn parse(words: &[String]) -> Result<(TestArgs, TestPlan), String> {
    if let Some((flag, why)) = words.iter().find_map(|w| {
        let flag = w.split('=').next().unwrap_or(w);
        REFUSED.iter().find(|(f, _)| *f == flag)
    }) {
        return Err(format!("{flag}: not in a mesh file: {why}"));
    }
    let argv = std::iter::once("fathom").chain(words.iter().map(String::as_str));
    let cli = Cli::try_parse_from(argv).map_err(|e| one_line(&e.render().to_string()))?;
    let Command::Test(test) = cli.command else {
        return Err(format!(
            "'{}' is not a test; name one of stream, rr, crr, udp or file",
            words.first().map_or("", String::as_str)
        ));
    };
    if let Some(host) = &test.common().host {
        return Err(format!("'{host}': the mesh names the ends; drop the host"));
    }
    let plan = test.plan().map_err(|e| e.to_string())?;
    Ok((test, plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str) -> Result<Checked, String> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        CliCommands.check(&words)
    }

    #[test]
    fn tests_read_as_on_the_command_line() {
        let rr = check("rr --size 64 -t 300ms").unwrap();
        assert_eq!((rr.kind.as_str(), rr.length_ns), ("rr", 300_000_000));
        let s = check("stream -t 1s --omit 500ms").unwrap();
        assert_eq!((s.kind.as_str(), s.length_ns), ("stream", 1_500_000_000));
        assert_eq!(check("crr").unwrap().length_ns, 10_000_000_000);
    }

    #[test]
    fn bad_commands_name_their_flag() {
        let says = |line: &str, what: &str| {
            let e = check(line).unwrap_err();
            assert!(e.contains(what), "{line}: {e}");
        };
        says("rr --size 0", "--size");
        says("rr -Z", "'-Z'");
        says("rr --server h2", "--server: not in a mesh file");
        says("rr --json", "--json: not in a mesh file");
        says("rr h2", "drop the host");
        says("stream -n 1M", "-n/--bytes: a mesh test runs for a time");
        says("runs", "not a test");
        says("rr --burst 0", "--burst");
    }
}
