//! The advisor's findings about a run as the terminal shows them: a short ranked list.

use fathom_report::model::Advice;
use std::fmt::Write;

/// The findings as a ranked list after a report (`--advise`) or under `fathom doctor --run`.
pub fn list(advice: &[Advice]) -> String {
    let warnings = advice.iter().filter(|a| a.severity == "warning").count();
    let mut s = format!(
        "advice: {warnings} warning(s), {} note(s)\n",
        advice.len() - warnings
    );
    if advice.is_empty() {
        s.push_str("nothing in this run's figures points at a limit to remove\n");
    }
    for (n, a) in advice.iter().enumerate() {
        let _ = writeln!(
            s,
            "{}. {} [{}, {} confidence] {}",
            n + 1,
            a.severity,
            a.id,
            a.confidence,
            a.seen
        );
        let _ = writeln!(s, "   why: {}", a.why);
        let _ = writeln!(s, "   change: {}", a.change);
    }
    s
}
