//! The mesh file: what it reads, and every error at its FILE:LINE:COLUMN.

use super::*;
use crate::class::Class;
use crate::spec::{Members, Targets};

/// A stand-in for the command line's check: kinds rr, crr, stream, udp; `-t DUR`; `--size N`
/// (N > 0); nothing else.
struct Fake;

impl Commands for Fake {
    fn check(&self, words: &[String]) -> Result<Checked, String> {
        let kind = words[0].clone();
        if !["rr", "crr", "stream", "udp"].contains(&kind.as_str()) {
            return Err(format!("unrecognized subcommand '{kind}'"));
        }
        let mut length_ns = 10_000_000_000;
        let mut it = words[1..].iter();
        while let Some(w) = it.next() {
            match w.as_str() {
                "-t" => {
                    let v = it.next().ok_or("-t: needs a value")?;
                    length_ns =
                        fathom_units::duration::parse(v, fathom_units::duration::Bare::Seconds)
                            .map_err(|r| format!("-t/--time: {r}"))?;
                }
                "--size" => {
                    let v = it.next().ok_or("--size: needs a value")?;
                    if v == "0" {
                        return Err("--size: '0' is below the smallest size, 1".into());
                    }
                }
                other => return Err(format!("unexpected argument '{other}' found")),
            }
        }
        Ok(Checked { kind, length_ns })
    }
}

fn parse_ok(text: &str) -> Mesh {
    parse("lab.toml", text, &Fake).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> String {
    parse("lab.toml", text, &Fake).unwrap_err().to_string()
}

const GOOD: &str = r#"
[mesh]
peers = 2

[members]
hosts = ["h1", "h2", { name = "h3", addr = "10.0.0.3:5301" }]
lab = "meshlab"

[[test]]
command = "rr --size 64 -t 300ms"
every = "1s"

[[test]]
name = "bulk"
command = ["stream", "-t", "1s"]
every = "10s"
jitter = "20%"

[alert]
after = 2
tolerance = "25%"
"#;

#[test]
fn a_mesh_file_reads_with_its_defaults() {
    let m = parse_ok(GOOD);
    assert_eq!(m.name, "lab");
    assert_eq!(m.peers, 2);
    assert_eq!(m.lab.as_deref(), Some("meshlab"));
    let Members::Listed(hosts) = &m.members else {
        panic!()
    };
    assert_eq!(hosts[2].addr, "10.0.0.3:5301");
    assert_eq!(hosts[0].addr, "h1");
    let rr = &m.tests[0];
    assert_eq!(
        (rr.name.as_str(), rr.class, rr.targets),
        ("rr", Class::Normal, Targets::Ring)
    );
    assert_eq!(rr.args, ["rr", "--size", "64", "-t", "300ms"]);
    assert_eq!(rr.hold_ns, 800_000_000);
    assert_eq!(rr.jitter_ns, 100_000_000);
    assert_eq!(rr.slip_ns, 500_000_000);
    assert!(rr.figure.higher_is_worse);
    let bulk = &m.tests[1];
    assert_eq!(
        (bulk.class, bulk.targets),
        (Class::Exclusive, Targets::Rotate)
    );
    assert_eq!(bulk.jitter_ns, 2_000_000_000);
    assert_eq!(m.alert.after, 2);
    assert_eq!(m.alert.tolerance, 0.25);
    assert_eq!(m.alert.clear, 3);
}

#[test]
fn discovery_members_and_overrides_read() {
    let m = parse_ok(
        "[members]\nfrom = \"dns:fathom.example:5301\"\nrefresh = \"30s\"\n\
         [[test]]\ncommand = \"udp -t 1s\"\nevery = \"1min\"\nclass = \"background\"\nfigure = \"jitter_us\"\n",
    );
    assert!(matches!(
        m.members,
        Members::Found {
            refresh_ns: 30_000_000_000,
            ..
        }
    ));
    assert_eq!(
        (m.tests[0].class, m.tests[0].targets),
        (Class::Background, Targets::Ring)
    );
    assert_eq!(m.tests[0].figure.metric, "jitter_us");
}

/// Each bad file, the place its error names and a part of the message.
#[test]
fn every_error_names_its_file_line_and_column() {
    let cases: &[(&str, &str, &str)] = &[
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr --size 0\"\nevery = \"1s\"\n", "lab.toml:4:15", "command: --size: '0'"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = [\"rr\", \"-Z\"]\nevery = \"1s\"\n", "lab.toml:4:18", "unexpected argument '-Z'"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr\"\nevry = \"1s\"\n", "lab.toml:5:1", "did you mean 'every'?"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr -t 1s\"\nevery = \"1s\"\n", "lab.toml:5:9", "cannot start every 1s"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr -t 1s\"\nevery = \"10ms\"\n", "lab.toml:5:9", "every: '10ms' is not in"),
        ("[members]\nhosts = [\"a\", \"a\"]\n[[test]]\ncommand = \"rr\"\nevery = \"1min\"\n", "lab.toml:2:15", "listed twice"),
        ("[members]\nhosts = [\"a\"]\n[[test]]\ncommand = \"rr\"\nevery = \"1min\"\n", "lab.toml:2:9", "two members at least"),
        ("[members]\nfrom = \"nowhere\"\n[[test]]\ncommand = \"rr\"\nevery = \"1min\"\n", "lab.toml:2:8", "'nowhere' is not a source"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr\"\nevery = \"1min\"\nclass = \"bulk\"\n", "lab.toml:6:9", "'bulk' is not a class"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr\"\nevery = \"1min\"\n[[test]]\ncommand = \"rr\"\nevery = \"2min\"\n", "lab.toml:6:1", "a test named 'rr' comes earlier"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[alert]\nmin_baseline = 50\n", "lab.toml:4:16", "over baseline"),
        ("[members]\nhosts = [\"a\", \"b\"]\n", "lab.toml:1:1", "no [[test]]"),
        ("[mesh]\nname = \"x y\"\n", "lab.toml:2:8", "may not hold ' '"),
        ("[members]\nhosts = [\"a\", \"b\"\n", "lab.toml:3:1", "invalid array; expected `]`"),
        ("[[test]]\ncommand = \"rr\"\nevery = \"1min\"\n", "lab.toml:1:1", "no [members]"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr 'x\"\nevery = \"1min\"\n", "lab.toml:4:11", "unclosed quote"),
        ("[members]\nhosts = [\"a\", \"b\"]\n[[test]]\ncommand = \"rr\"\nevery = \"1min\"\nslip = \"59s\"\n", "lab.toml:6:8", "reaches the next start"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .map(|(text, at, says)| (text, at, says, parse_err(text)))
        .filter(|(_, at, says, e)| !e.starts_with(*at) || !e.contains(*says))
        .map(|(text, at, says, e)| format!("{text}=> {e}\n(expected {at} '{says}')\n"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_huge_file_is_refused_before_parsing() {
    let text = format!("# {}\n", "x".repeat(MAX_FILE));
    assert!(parse_err(&text).contains("over 1048576 bytes"));
}
