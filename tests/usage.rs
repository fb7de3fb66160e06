//! Bad input: one line naming the problem, exit 2 for usage and 1 for runtime, never a panic.

mod common;
use common::*;

fn check(args: &[&str], code: i32, needle: &str) {
    let out = run(args, 30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    check(&["stream", "-P", "0"], 2, "--parallel");
    check(&["stream", "--buffer", "1x"], 2, "'1x' is not a size");
    check(&["stream", "--write", "0"], 2, "--write");
    check(&["stream", "-t", "-1"], 2, "negative");
    check(&["stream", "-t", "0"], 2, "--time");
    check(&["stream", "-n", "1M", "--omit", "1s"], 2, "--omit");
    check(&["stream", "--affinity", "x"], 2, "CPU list");
    check(&["stream", "--nosuch"], 2, "--nosuch");
    check(&["stream", "-P", "-1"], 2, "--parallel");
    check(
        &["stream", "-t", "1ms"],
        2,
        "shorter than the shortest interval (10ms)",
    );
    check(&["rr", "-t", "10ns"], 2, "-t/--time: 10ns");
    check(&["udp", "-t", "9.9ms"], 2, "--time");
}

#[test]
fn a_sweep_offers_only_options_of_the_plan() {
    for name in ["quiet", "iterations", "per-host"] {
        let vary = format!("{name}=1,2");
        check(
            &["sweep", "stream", "--vary", &vary],
            2,
            "has no such option",
        );
        let err = stderr(&run(&["sweep", "stream", "--vary", &vary], 30));
        let offered = err.split("it can vary: ").nth(1).unwrap_or_default();
        assert!(
            !offered.split(", ").any(|o| o.trim() == name),
            "{name} offered: {err}"
        );
    }
    // --advise explains one run: sweep's help does not show it, and sweep refuses it.
    let help =
        String::from_utf8_lossy(&run(&["sweep", "stream", "--help"], 30).stdout).into_owned();
    assert!(!help.contains("--advise"), "{help}");
    check(
        &["sweep", "stream", "--vary", "parallel=1,2", "--advise"],
        2,
        "--advise explains one run",
    );
}

#[test]
fn a_negative_count_is_called_negative_not_out_of_range() {
    check(&["stream", "-P", "-4"], 2, "'-4' is negative");
    assert!(!stderr(&run(&["stream", "-P", "-4"], 30)).contains("4294967295"));
    check(&["stream", "-P", "two"], 2, "'two' is not a whole number");
}

#[test]
fn runtime_errors_exit_1_with_one_line() {
    check(
        &["stream", "no-such-host.invalid"],
        1,
        "no-such-host.invalid",
    );
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    check(&["stream", &format!("127.0.0.1:{port}")], 1, "refused");
    check(
        &["stream", "--key-file", "/nonexistent/key"],
        2,
        "/nonexistent/key",
    );
}

#[test]
fn json_errors_are_one_json_document() {
    for args in [
        &["stream", "-P", "0", "--json"][..],
        &["stream", "127.0.0.1:1", "--json"],
    ] {
        let out = run(args, 30);
        let j = json(&out);
        assert!(j["error"].as_str().is_some_and(|e| !e.is_empty()), "{j}");
    }
}

#[test]
fn usage_errors_keep_what_is_missing_and_the_choices_on_one_line() {
    check(&["compare", "1"], 2, "not provided: <RUN_B>");
    check(&["plot", "1"], 2, "--output <FILE>");
    check(&["sweep", "stream"], 2, "--vary");
    check(&["study"], 2, "<NAME>");
    check(&["report"], 2, "<RUN>");
    check(&["lab", "up"], 2, "<--hosts <N>|TOPOLOGY>");
    check(&["lab", "exec", "h1"], 2, "<COMMAND>");
    let values = "[possible values: both, a-to-b, b-to-a]";
    check(
        &[
            "lab",
            "wan",
            "set",
            "h1-h2",
            "delay=1ms",
            "--direction",
            "sideways",
        ],
        2,
        values,
    );
}

#[test]
fn misspelt_subcommands_and_flags_get_a_did_you_mean() {
    check(&["strem"], 2, "'stream'");
    check(
        &["stream", "--paralel", "3"],
        2,
        "a similar argument exists: '--parallel'",
    );
}

#[test]
fn negative_values_with_units_are_called_negative() {
    check(&["stream", "-t", "-5s"], 2, "'-5s' is negative");
    check(&["stream", "-t", "-5"], 2, "'-5' is negative");
    check(&["stream", "-i", "-1s"], 2, "--interval");
    check(&["stream", "--buffer", "-64K"], 2, "sizes are positive");
    check(&["udp", "--rate", "-1G"], 2, "rates are positive");
    check(
        &["lab", "up", "--hosts", "2", "--rate", "-1G"],
        2,
        "rates are positive",
    );
}

#[test]
fn bad_lab_input_is_usage() {
    let topology = format!("{}/usage-topology.toml", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&topology, "x = 1\n").unwrap();
    check(&["lab", "up", &topology], 2, "unknown field `x`");
    check(
        &["lab", "up", "/nonexistent/topology.toml"],
        2,
        "/nonexistent/topology.toml",
    );
    check(
        &["lab", "up", "--hosts", "2", "--wan", "dealy=5ms"],
        2,
        "unknown key 'dealy'",
    );
    check(
        &["lab", "up", "--hosts", "2", "--wan", "loss=150%"],
        2,
        "'150%'",
    );
    check(
        &["lab", "up", "--hosts", "2", "--wan", "rate=-1G"],
        2,
        "rates are positive",
    );
    let err = stderr(&run(&["lab", "status", "--name", "nolab-usage"], 30));
    assert!(err.contains("no lab named 'nolab-usage'"), "{err}");
    assert!(
        !err.contains("lab status"),
        "status must not point at itself: {err}"
    );
}

#[test]
fn reading_commands_take_the_store_to_read_and_no_no_store() {
    let reads: [&[&str]; 5] = [
        &["runs"],
        &["show", "1"],
        &["compare", "1", "2"],
        &["plot", "1", "-o", "x.svg"],
        &["report", "1", "-o", "x.html"],
    ];
    for args in reads {
        check(&[args, &["--no-store"]].concat(), 2, "'--no-store'");
        let other = [args, &["--store", "/nonexistent/other.db"]].concat();
        check(&other, 1, "no results store at /nonexistent/other.db");
        let help = run(&[&args[..1], &["--help"]].concat(), 30);
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(
            text.contains("The results database to read"),
            "{args:?}: {text}"
        );
        assert!(!text.contains("Do not keep this run"), "{args:?}: {text}");
    }
}

#[test]
fn a_congestion_control_the_host_lacks_is_refused_naming_those_it_offers() {
    let offered = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    let Some(one) = offered.split_whitespace().next() else {
        return;
    };
    check(
        &["stream", "--cc", "nosuchcc", "-t", "1s"],
        2,
        "--cc nosuchcc is not a congestion control this host offers",
    );
    check(&["rr", "--cc", "nosuchcc", "-t", "1s"], 2, one);
    let (server, client) = (Agent::start(&[]), Agent::start(&[]));
    let args = [
        "stream",
        "--server",
        &server.target(),
        "--clients",
        &client.target(),
        "--cc",
        "nosuchcc",
        "-t",
        "1s",
    ];
    let out = run(&args, 60);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "the agents' answer: {err}");
    assert!(
        err.contains("is not a congestion control this host offers"),
        "{err}"
    );
    assert!(err.contains(one), "{err}");
}

/// Every long flag of every command, hidden ones included, walked from clap's definitions.
fn clap_flags(c: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
    for a in c.get_arguments() {
        out.extend(a.get_long().map(str::to_string));
        out.extend(
            a.get_all_aliases()
                .into_iter()
                .flatten()
                .map(str::to_string),
        );
    }
    for s in c.get_subcommands() {
        clap_flags(s, out);
    }
}

/// The `.rs` and `.md` files below `dir`: users read the README and docs/, and the sources'
/// warnings, errors and doc comments name flags.
fn named_in(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            named_in(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "md") {
            out.push(p);
        }
    }
}

/// Each `--flag` in `text`: two dashes after a non-word character, a letter, then letters,
/// digits and single dashes; a CSS custom property (`--ink:`, `var(--ink)`) is not one.
fn flags_in(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("--") {
        let before = i.checked_sub(1).map(|j| b[j]);
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
            continue;
        }
        let name: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        let name = name.trim_end_matches('-');
        let after = text[i + 2 + name.len()..].chars().next();
        let css = after == Some(':') || text[..i].ends_with("var(");
        if name.starts_with(|c: char| c.is_ascii_lowercase()) && !css {
            out.push(name.to_string());
        }
    }
    out
}

#[test]
fn every_flag_the_docs_and_messages_name_exists() {
    use clap::CommandFactory;
    let mut known = std::collections::BTreeSet::new();
    clap_flags(&fathom::cli::Cli::command(), &mut known);
    known.extend(["help", "version"].map(String::from));
    // Other programs' flags, named where fathom says how to use them: cargo's (`cargo run
    // --example mesh_sim`), srun's, mpirun's, and the bench scripts' (`bench/robustness.py
    // --only attacks`).
    known.extend(["release", "path", "relative", "hostfile", "only", "example"].map(String::from));
    // kubectl's, where the README puts the mesh on Kubernetes (`create secret --from-file`).
    known.insert("from-file".to_string());
    // iperf3's own, where fathom's iperf3 side says what it does with them.
    known.extend(
        [
            "sctp",
            "rsa-private-key-path",
            "rsa-public-key-path",
            "username",
            "udp-counters-64bit",
        ]
        .map(String::from),
    );
    // strongSwan's swanctl and util-linux's unshare, which the lab runs for `--ipsec`.
    known.extend(
        [
            "child",
            "file",
            "ike",
            "initiate",
            "list-sas",
            "load-all",
            "mount",
            "noprompt",
            "propagation",
            "raw",
            "timeout",
            "uri",
        ]
        .map(String::from),
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    named_in(&root.join("docs"), &mut files);
    named_in(&root.join("src"), &mut files);
    for c in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        named_in(&c.path().join("src"), &mut files);
    }
    let mut unknown = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for flag in flags_in(&text) {
            if !known.contains(&flag) {
                unknown.push(format!("--{flag} in {}", f.display()));
            }
        }
    }
    assert!(unknown.is_empty(), "no such flags: {unknown:#?}");
}

#[test]
fn the_test_subcommands_help_is_as_recorded() {
    // tests/help/snapshot.sh records it byte for byte; here the words are compared, so that a
    // terminal width (COLUMNS) in the environment does not matter.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/help");
    for args in [
        "",
        "stream",
        "rr",
        "crr",
        "udp",
        "file",
        "sweep",
        "sweep stream",
        "sweep rr",
        "sweep crr",
        "sweep udp",
        "launch",
        "launch stream",
        "launch rr",
        "launch crr",
        "launch udp",
    ] {
        let mut argv: Vec<&str> = args.split_whitespace().collect();
        let name = std::iter::once("fathom")
            .chain(argv.iter().copied())
            .collect::<Vec<_>>();
        let file = dir.join(format!("{}.txt", name.join("-")));
        argv.push("--help");
        let out = run(&argv, 30);
        let recorded = std::fs::read_to_string(&file).expect("a recorded help");
        let words = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
        let shown = String::from_utf8_lossy(&out.stdout);
        assert_eq!(words(&shown), words(&recorded), "fathom {args} --help");
    }
}
