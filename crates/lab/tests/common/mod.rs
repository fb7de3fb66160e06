//! Helpers for the lab's integration tests: the root check, unique lab names, a stand-in agent,
//! a guard that always tears its lab down, and checks that nothing is left behind.
// Each test binary uses a different part of these helpers.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use fathom_lab::{AgentCommand, Lab, Topology, UpOptions};

/// True when running as root; otherwise prints why `test` is skipped.
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    skip(test, "needs root to create network namespaces");
    false
}

/// Says on stderr, past the test harness's capture, that `test` is skipped and why.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
}

/// A lab topology file's text: `[[host]]`, `[[switch]]` and `[[link]]` entries, in that order,
/// so a caller may append keys to the last link or further sections.
pub fn topology(hosts: &[&str], switches: &[&str], links: &[[&str; 2]]) -> String {
    let mut text = String::new();
    for h in hosts {
        text += &format!("[[host]]\nname = \"{h}\"\n");
    }
    for s in switches {
        text += &format!("[[switch]]\nname = \"{s}\"\n");
    }
    for [a, b] in links {
        text += &format!("[[link]]\nends = [\"{a}\", \"{b}\"]\n");
    }
    text
}

/// A lab test's start: `None` (its SKIP said) without root; else a lab name unique to this
/// process and `tag`, and the root namespace's links before the test (for [`assert_gone`]).
pub fn lab_test(test: &str, tag: &str) -> Option<(String, BTreeSet<String>)> {
    if !root_or_skip(test) {
        return None;
    }
    Some((unique_name(tag), root_links()))
}

/// A lab name unique to this test process and `tag`.
pub fn unique_name(tag: &str) -> String {
    format!("t{}-{tag}", std::process::id())
}

/// A stand-in for `fathom serve --listen ADDR --key-file PATH`: checks the key file, then
/// accepts and closes connections until killed. Perl is part of every Debian system.
const STANDIN: &str = r#"#!/usr/bin/perl
use strict;
use warnings;
use IO::Socket::INET;
my ($cmd, %opt) = @ARGV;
$cmd eq 'serve' or die "usage: serve --listen ADDR --key-file PATH\n";
open(my $fh, '<', $opt{'--key-file'}) or die "key file $opt{'--key-file'}: $!\n";
my $key = <$fh>;
$key =~ /\A[0-9a-f]{64}\z/ or die "key file does not hold 64 hex digits\n";
my $server = IO::Socket::INET->new(LocalAddr => $opt{'--listen'}, Listen => 64, ReuseAddr => 1)
    or die "listen on $opt{'--listen'}: $@\n";
$| = 1;
print "listening on $opt{'--listen'}\n";
while (my $c = $server->accept) { close $c; }
"#;

/// The stand-in agent script, written once per test process (atomically, since test
/// processes run side by side).
pub fn standin_exe() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let path = dir.join("standin-agent");
        let tmp = dir.join(format!("standin-agent.{}", std::process::id()));
        std::fs::write(&tmp, STANDIN).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        path
    })
}

/// Options for lab `name` with the stand-in agent. Its agents get a minute to listen: perl
/// starting under `nice -n 19` on a loaded machine may take longer than `up`'s default, and
/// these tests check what `up` makes, not how fast.
pub fn standin_options(name: &str) -> UpOptions {
    UpOptions {
        ready_timeout: std::time::Duration::from_secs(60),
        ..UpOptions::new(name, AgentCommand::fathom(standin_exe()))
    }
}

/// Runs `lab down` for its lab when dropped, also while a failed test unwinds.
pub struct LabGuard(pub String);

impl Drop for LabGuard {
    fn drop(&mut self) {
        match fathom_lab::down(&self.0) {
            Ok(_) | Err(fathom_lab::Error::NoSuchLab(_)) => {}
            Err(e) => eprintln!("cleanup of lab {}: {e}", self.0),
        }
    }
}

/// Brings up a star of `hosts` hosts as lab `name` with the stand-in agent, guarded.
pub fn up_star(name: &str, hosts: u32) -> (LabGuard, Lab) {
    let guard = LabGuard(name.to_string());
    let topology = Topology::star(hosts, None, None, None).unwrap();
    let lab = Lab::up(&topology, &standin_options(name)).unwrap();
    (guard, lab)
}

/// The interface names in the root namespace.
pub fn root_links() -> BTreeSet<String> {
    let out = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap().to_string())
        .collect()
}

/// Asserts that lab `name` left nothing: no namespace, no state, no agent, no root interface
/// that was not there in `root_before`.
pub fn assert_gone(name: &str, pids: &[u32], root_before: &BTreeSet<String>) {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("fl-{name}-");
    let left: Vec<&str> = listing.lines().filter(|l| l.starts_with(&prefix)).collect();
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
    let etc: Vec<String> = std::fs::read_dir("/etc/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default();
    assert!(etc.is_empty(), "/etc/netns entries left behind: {etc:?}");
    assert!(
        !Path::new(fathom_lab::STATE_ROOT).join(name).exists(),
        "state directory left behind"
    );
    for &pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie_or_gone = stat
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| rest.starts_with('Z'));
        assert!(zombie_or_gone, "agent {pid} still runs");
    }
    let new: Vec<String> = root_links().difference(root_before).cloned().collect();
    let ours: Vec<&String> = new
        .iter()
        .filter(|n| n.starts_with('h') || n.starts_with("sw") || n.starts_with("eth"))
        .collect();
    assert!(
        ours.is_empty(),
        "interfaces appeared in the root namespace: {ours:?}"
    );
}

/// The pids of a lab's agents.
pub fn agent_pids(lab: &Lab) -> Vec<u32> {
    lab.hosts()
        .iter()
        .filter_map(|h| h.agent.as_ref())
        .map(|a| a.pid)
        .collect()
}

/// Connects from host `from`'s namespace to host `to`'s agent, or panics with the last error.
/// Attempts of a second each are repeated for up to 20 s: the first packets across the switch
/// wait for ARP, whose retry is a second, and on a loaded machine one attempt can miss it.
pub fn reach(lab: &Lab, from: &str, to: &str) {
    let to = lab.host(to).unwrap().agent_addr();
    let netns = &lab.host(from).unwrap().netns;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match fathom_lab::connect_in(netns, to, std::time::Duration::from_secs(1)) {
            Ok(_) => return,
            Err(e) if std::time::Instant::now() >= deadline => {
                panic!("{netns} cannot reach {to} in 20 s: {e}")
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    }
}

/// The exit status of `sh -c script` run in `node` of `lab`.
pub fn shell(lab: &Lab, node: &str, script: &str) -> i32 {
    let sh = ["sh", "-c", script].map(String::from).to_vec();
    lab.exec(node, &sh).unwrap()
}
