//! The doctor's terminal list of a host's findings, for this host, a far host and a lab's hosts.

use fathom_advisor::{Finding, Severity};
use std::fmt::Write;

/// The terminal list: a heading, then each finding, worst first, notes last.
pub fn list(host: &str, interfaces: &[&str], found: &[Finding]) -> String {
    let mut s = String::new();
    let ifaces = if interfaces.is_empty() {
        "no interface but loopback".to_string()
    } else {
        interfaces.join(", ")
    };
    let warnings = found
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    let _ = writeln!(
        s,
        "fathom doctor: {host} ({ifaces}): {warnings} warning(s), {} note(s)",
        found.len() - warnings
    );
    if found.is_empty() {
        s.push_str("nothing in this host's settings limits networking\n");
    }
    finding_lines(&mut s, found);
    s
}

/// Each finding as a block: rank, severity, id, confidence, `source = value`, why, change.
pub fn finding_lines(s: &mut String, found: &[Finding]) {
    for (n, f) in found.iter().enumerate() {
        let _ = writeln!(
            s,
            "\n{}. {} [{}, {} confidence] {} = {}",
            n + 1,
            f.severity.name(),
            f.id,
            f.confidence.name(),
            f.source,
            f.value
        );
        let _ = writeln!(s, "   why: {}", f.why);
        let _ = writeln!(s, "   change: {}", f.change);
    }
}
