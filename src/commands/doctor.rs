//! `fathom doctor`: this host's settings through the advisor, as a ranked list or one JSON
//! document. It reads and never sends traffic; it exits 0 whatever it finds.

use crate::cli::doctor::DoctorArgs;
use crate::Failure;
use fathom_advisor::{findings, read, Finding, Severity};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// The version of the doctor document's shape (docs/schema/doctor.schema.json).
pub const SCHEMA_VERSION: u32 = 1;

/// What `fathom doctor --json` prints.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    document: &'static str,
    fathom_version: &'static str,
    host: String,
    interfaces: Vec<&'a str>,
    findings: &'a [Finding],
}

/// Runs `fathom doctor`.
pub fn run(a: &DoctorArgs) -> Result<(), Failure> {
    if let Some(name) = &a.iface {
        check_iface(name)?;
    }
    let limit = crate::fdlimit::Limit::now();
    let settings = read::host(a.iface.as_deref(), Some((limit.soft, limit.hard)));
    let found = findings(&settings);
    let interfaces: Vec<&str> = settings.ifaces.iter().map(|i| i.name.as_str()).collect();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let out = if a.json {
        let doc = Document {
            schema_version: SCHEMA_VERSION,
            document: "doctor",
            fathom_version: env!("CARGO_PKG_VERSION"),
            host,
            interfaces,
            findings: &found,
        };
        let mut v = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Failure::Runtime(format!("doctor: {e}")))?;
        v.push(b'\n');
        v
    } else {
        list(&host, &interfaces, &found).into_bytes()
    };
    crate::commands::output::write_stdout(&out);
    Ok(())
}

/// Refuses an interface this host does not have, naming the ones it has.
fn check_iface(name: &str) -> Result<(), Failure> {
    let known = read::interfaces(Path::new("/"));
    if known.iter().any(|k| k == name) {
        return Ok(());
    }
    let has = if known.is_empty() {
        "none but loopback".to_string()
    } else {
        known.join(", ")
    };
    Err(Failure::Usage(format!(
        "--iface: no interface '{name}' to look at on this host (loopback is not checked); it has: {has}"
    )))
}

/// The terminal list: a heading, then each finding, worst first, notes last.
fn list(host: &str, interfaces: &[&str], found: &[Finding]) -> String {
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
    s
}
