//! `fathom doctor`: this host's settings through the advisor, as a ranked list or one JSON
//! document, and with `--run N` the advisor's diagnosis of a stored run; `--advise` on the test
//! commands ends a run with that diagnosis. It exits 0 whatever it finds. Alone or with
//! `--run` it only reads; with HOST it also probes the path (`doctor_remote`), and with
//! `--verify` it re-runs the stored test (`doctor_verify`).

use super::doctor_lab::LabDoctor;
use super::doctor_remote::Remote;
use super::doctor_verify::Verified;
use super::output::Format;
use crate::cli::common::CommonArgs;
use crate::cli::doctor::DoctorArgs;
use crate::Failure;
use fathom_advisor::{diagnose, findings, read, Finding, Settings};
use fathom_report::model::Advice;
use fathom_report::Report;
use fathom_store::Ref;
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
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    advice: Option<&'a [Advice]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_settings: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remote: Option<&'a Remote>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verify: Option<&'a Verified>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lab: Option<&'a LabDoctor>,
}

/// A stored run to explain: its id, its test's arguments, its findings, and for a lab run
/// where the settings it was explained with came from.
struct Explained {
    id: i64,
    args: Vec<String>,
    advice: Vec<Advice>,
    settings_from: Option<String>,
}

/// Runs `fathom doctor`.
pub fn run(a: &DoctorArgs) -> Result<(), Failure> {
    if let Some(name) = &a.iface {
        check_iface(name, a.root.as_deref().unwrap_or(Path::new("/")))?;
    }
    let stored = a.run.as_deref().map(|r| load(a, r)).transpose()?;
    let remote = a
        .host
        .as_deref()
        .map(|h| super::doctor_remote::remote(h, a.key_file.as_deref()))
        .transpose()?;
    let lab = a.lab.as_deref().map(super::doctor_lab::lab).transpose()?;
    let limit = crate::fdlimit::Limit::now();
    let mut settings = match &a.root {
        Some(root) => read::tree(root, a.iface.as_deref()),
        None => read::host(a.iface.as_deref(), Some((limit.soft, limit.hard))),
    };
    let explained = stored.map(|st| explain(a, st, &mut settings));
    let verified = match (&explained, a.verify) {
        (Some(e), true) => Some(super::doctor_verify::verify(
            &e.args,
            &e.advice,
            a.iterations,
            a.apply,
        )?),
        _ => None,
    };
    let found = findings(&settings);
    let interfaces: Vec<&str> = settings.ifaces.iter().map(|i| i.name.as_str()).collect();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let doc = Document {
        schema_version: SCHEMA_VERSION,
        document: "doctor",
        fathom_version: env!("CARGO_PKG_VERSION"),
        host,
        interfaces,
        findings: &found,
        run: explained.as_ref().map(|e| e.id),
        advice: explained.as_ref().map(|e| e.advice.as_slice()),
        run_settings: explained.as_ref().and_then(|e| e.settings_from.as_deref()),
        remote: remote.as_ref(),
        verify: verified.as_ref(),
        lab: lab.as_ref(),
    };
    let out = if a.json {
        let mut v = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Failure::Runtime(format!("doctor: {e}")))?;
        v.push(b'\n');
        v
    } else {
        text(&doc).into_bytes()
    };
    crate::commands::output::write_stdout(&out);
    Ok(())
}

/// Stored run `st` (id, report, environment, arguments) explained: for a lab run with the lab
/// hosts' settings (`doctor_run`), otherwise with `settings`, this host's, to which the
/// sysctls kept with the run are added (unless `--root` gave a tree).
fn explain(
    a: &DoctorArgs,
    (id, report, env, args): (i64, Report, serde_json::Value, Vec<String>),
    settings: &mut Settings,
) -> Explained {
    let lab = a
        .root
        .is_none()
        .then(|| super::doctor_run::lab_settings(&args, &report))
        .flatten();
    let (advice, settings_from) = match lab {
        Some(l) => (diagnose(&report, &l.settings), Some(l.note)),
        None => {
            if a.root.is_none() {
                settings.sysctls.extend(stored_sysctls(&env));
            }
            (diagnose(&report, settings), None)
        }
    };
    Explained {
        id,
        args,
        advice,
        settings_from,
    }
}

/// The terminal form of `d`: this host's list, then each part the command asked for.
fn text(d: &Document) -> String {
    let mut text = super::doctor_list::list(&d.host, &d.interfaces, d.findings);
    if let (Some(id), Some(advice)) = (d.run, d.advice) {
        let _ = write!(text, "\nrun {id}\n");
        if let Some(from) = d.run_settings {
            let _ = writeln!(text, "settings: {from}");
        }
        text.push_str(&fathom_advisor::diagnose::list(advice));
    }
    if let Some(v) = d.verify {
        text.push_str(&super::doctor_verify::list(v));
    }
    if let Some(l) = d.lab {
        text.push_str(&super::doctor_lab::list(l));
    }
    if let Some(r) = d.remote {
        text.push('\n');
        text.push_str(&super::doctor_remote::list(r));
    }
    text
}

/// Stored run `r` of the store `a` names: its id, report, environment and test arguments.
fn load(a: &DoctorArgs, r: &str) -> Result<(i64, Report, serde_json::Value, Vec<String>), Failure> {
    let id = match Ref::parse(r) {
        Ok(Ref::Run(id)) => id,
        Ok(Ref::Series(_)) => {
            return Err(Failure::Usage(format!(
                "--run: '{r}' is a series; give one of its runs (fathom show {r} lists them)"
            )))
        }
        Err(e) => return Err(Failure::Usage(format!("--run: {e}"))),
    };
    let store = super::show::open_existing(&a.store)?;
    let run = store
        .load_run(id)
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    Ok((id, run.report, run.env, run.args))
}

/// The sysctls kept with a stored run (the controller host's, at run time), bounded to the
/// names the advisor reads and to short values.
fn stored_sysctls(env: &serde_json::Value) -> Vec<(String, String)> {
    let Some(map) = env.get("sysctls").and_then(|s| s.as_object()) else {
        return Vec::new();
    };
    fathom_advisor::settings::sysctl_names()
        .filter_map(|n| {
            let v = map.get(n)?.as_str()?;
            (v.len() <= 256).then(|| (n.to_string(), v.to_string()))
        })
        .collect()
}

/// `--advise`: the advisor's findings for `report` from its figures and this host's sysctls.
pub fn advise(report: &mut Report) {
    let settings = Settings {
        sysctls: read::sysctls(Path::new("/"), fathom_advisor::settings::sysctl_names()),
        ..Settings::default()
    };
    report.advice = Some(diagnose(report, &settings));
}

/// After a report printed as a table, its advice (with `--advise`) and its check (with
/// `--verify-advice`); JSON has them inside.
pub fn print_advice(report: &Report, format: Format) {
    if let (Some(a), Format::Table) = (&report.advice, format) {
        let mut text = format!("\n{}", fathom_advisor::diagnose::list(a));
        if let Some(v) = &report.advice_check {
            text.push_str(&super::doctor_verify::list(v));
        }
        crate::commands::output::write_stdout(text.as_bytes());
    }
}

/// Refuses `--advise` where a command runs many tests (`what`): it explains one run.
pub fn refuse_advise(c: &CommonArgs, what: &str) -> Result<(), Failure> {
    match c.advise {
        true => Err(Failure::Usage(format!(
            "--advise explains one run, not {what}; run fathom doctor --run N on one of the stored runs"
        ))),
        false => Ok(()),
    }
}

/// Refuses an interface this host does not have, naming the ones it has.
fn check_iface(name: &str, root: &Path) -> Result<(), Failure> {
    let known = read::interfaces(root);
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
