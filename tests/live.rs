//! Interval lines as they happen (iperf3's habit): a single run prints each interval's line on
//! stdout when the interval closes, also into a pipe, for every kind; `--quiet` leaves only the
//! table after the run; `--json` keeps stdout one document; with several client hosts,
//! `--per-host` adds each host's line under every interval line.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// True for an interval line ("  0.00-1.00  ...").
fn interval_line(l: &str) -> bool {
    l.split_whitespace()
        .next()
        .and_then(|t| t.split_once('-'))
        .is_some_and(|(a, b)| a.parse::<f64>().is_ok() && b.parse::<f64>().is_ok())
}

/// Runs `fathom KIND -t 3 ARGS` with stdout a pipe: whether the first interval line came over a
/// second before the output ended (the test runs two more intervals after it), and everything
/// it printed.
fn first_line_while_running(kind: &str, args: &[&str]) -> (bool, String) {
    let mut child = fathom()
        .args([kind, "-t", "3", "--no-store"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fathom runs");
    let pid = child.id() as i32;
    let guard = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        // SAFETY: signals the child this test spawned, by its PID (a no-op once it was reaped
        // and the test process is gone; the test ends well before this).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let mut early = None;
    let mut text = String::new();
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let line = line.expect("a line");
        if early.is_none() && interval_line(&line) {
            early = Some(std::time::Instant::now());
        }
        text += &line;
        text.push('\n');
    }
    assert!(child.wait().expect("wait").success(), "{text}");
    drop(guard);
    let ahead = early.is_some_and(|t| t.elapsed() > std::time::Duration::from_secs(1));
    (ahead, text)
}

#[test]
fn every_kind_prints_its_intervals_as_they_close_into_a_pipe() {
    for kind in ["stream", "rr", "crr", "udp"] {
        let (early, text) = first_line_while_running(kind, &[]);
        assert!(
            early,
            "{kind}: no interval line before the test ended:\n{text}"
        );
        assert_eq!(
            text.lines().filter(|l| interval_line(l)).count(),
            3,
            "{kind}: one line per interval, not repeated after the run:\n{text}"
        );
        assert!(text.contains("summary over the measured window"), "{text}");
    }
}

#[test]
fn quiet_prints_only_the_table_after_the_run() {
    let (early, text) = first_line_while_running("stream", &["--quiet"]);
    assert!(
        !early,
        "--quiet printed an interval line while running:\n{text}"
    );
    assert_eq!(
        text.lines().filter(|l| interval_line(l)).count(),
        3,
        "{text}"
    );
}

#[test]
fn json_stays_one_document() {
    let out = run_ok(
        &["rr", "-t", "1", "-i", "200ms", "--json", "--no-store"],
        60,
    );
    assert_eq!(json(&out)["intervals"].as_array().map(Vec::len), Some(5));
}

#[test]
fn per_host_lines_follow_each_interval_of_a_multi_host_run() {
    let server = Agent::start(&[]);
    let clients = [Agent::start(&[]), Agent::start(&[])];
    let names: Vec<String> = clients.iter().map(Agent::target).collect();
    let list = names.join(",");
    let args = [
        "stream",
        "--server",
        &server.target(),
        "--clients",
        &list,
        "-t",
        "2",
        "--per-host",
        "--no-store",
    ];
    let out = run_ok(&args, 60);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at: Vec<usize> = (0..lines.len())
        .filter(|&i| interval_line(lines[i]))
        .collect();
    assert_eq!(at.len(), 2, "{text}");
    for i in at {
        for (k, name) in names.iter().enumerate() {
            assert!(
                lines[i + 1 + k].trim_start().starts_with(name.as_str()),
                "host {name} under interval line {i}:\n{text}"
            );
        }
    }
}

/// What a terminal shows of `raw`, line by line: a carriage return goes back to the line's
/// start and ESC[2K clears it.
fn screen(raw: &str) -> Vec<String> {
    raw.split('\n')
        .map(|line| {
            let mut shown: Vec<char> = Vec::new();
            for segment in line.split('\r') {
                let mut col = 0;
                let mut rest = segment;
                while !rest.is_empty() {
                    if let Some(after) = rest.strip_prefix("\x1b[2K") {
                        shown.clear();
                        rest = after;
                        continue;
                    }
                    let c = rest.chars().next().expect("not empty");
                    rest = &rest[c.len_utf8()..];
                    if col < shown.len() {
                        shown[col] = c;
                    } else {
                        shown.push(c);
                    }
                    col += 1;
                }
            }
            shown.into_iter().collect::<String>().trim_end().to_string()
        })
        .collect()
}

#[test]
fn on_a_terminal_the_progress_line_never_mixes_with_interval_lines() {
    let cmd = format!("{} stream -t 2 --no-store", env!("CARGO_BIN_EXE_fathom"));
    let out = run_program("script", &["-qec", &cmd, "/dev/null"], 60);
    assert!(out.status.success(), "{}", stderr(&out));
    let raw = String::from_utf8_lossy(&out.stdout);
    let lines = screen(&raw);
    let ivs: Vec<&String> = lines.iter().filter(|l| interval_line(l)).collect();
    assert_eq!(ivs.len(), 2, "{lines:#?}");
    for l in ivs {
        assert!(
            l.starts_with("  0.00-1.00") || l.starts_with("  1.00-2.00"),
            "{l:?}"
        );
        assert!(!l.contains(" s  "), "a progress line mixed into {l:?}");
    }
}
