//! `fathom doctor HOST`: the settings of HOST's host through its agent (the advisor's reader run
//! there, sent back as [`fathom_advisor::wire`] JSON and checked against its bounds), then a
//! short probe of the path (a few rr transactions for the RTT, one stream of 2 s) whose stream
//! the advisor explains with the settings of its ends: the far end's (the receiver), this
//! host's send-side sysctls (the sender).

use super::argv::run_args;
use super::doctor_list;
use crate::controller::{self, Target};
use crate::Failure;
use fathom_advisor::{diagnose, findings, read, wire, Finding, Settings};
use fathom_report::model::Advice;
use fathom_report::Report;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// The rr transactions that measure the RTT.
const PROBE_TRANSACTIONS: &str = "20";
/// How long the probe's stream runs.
const PROBE_TIME: &str = "2s";

/// The send-side sysctls, which a run's sender (the client host) has its own of.
pub const SEND_SIDE: [&str; 3] = [
    "net.core.wmem_max",
    "net.core.wmem_default",
    "net.ipv4.tcp_wmem",
];

/// What the probe measured.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Probe {
    /// The rr transactions' median latency (a round trip plus the agents' turnaround), µs.
    pub rtt_p50_us: Option<f64>,
    /// Transactions the rr part made.
    pub transactions: u64,
    /// The stream's throughput, as its receiver counted it, bits/s.
    pub bits_per_second: f64,
    /// The stream's measured window, s.
    pub seconds: f64,
}

/// The far end, as `fathom doctor --json` shows it under `remote`.
#[derive(Serialize)]
pub struct Remote {
    /// HOST as given.
    pub host: String,
    /// The interfaces its agent looked at.
    pub interfaces: Vec<String>,
    /// The findings on its settings, worst first.
    pub findings: Vec<Finding>,
    /// The probe's figures.
    pub probe: Probe,
    /// The advisor's findings about the probe's stream, worst first.
    pub advice: Vec<Advice>,
}

/// Reads `host`'s settings through its agent (with the key in `key_file`), probes the path
/// and explains it.
pub fn remote(host: &str, key_file: Option<&Path>) -> Result<Remote, Failure> {
    let there = settings_of(host, key_file)?;
    let (rr, stream) = probe(host, key_file)?;
    let latency = rr.summary.rr().and_then(|s| s.latency_us.clone());
    let probe = Probe {
        rtt_p50_us: latency.map(|l| l.p50),
        transactions: rr.summary.rr().map_or(0, |s| s.transactions),
        bits_per_second: stream.summary.transfer.bits_per_second,
        seconds: stream.summary.seconds,
    };
    Ok(Remote {
        host: host.to_string(),
        interfaces: there.ifaces.iter().map(|i| i.name.clone()).collect(),
        findings: findings(&there),
        advice: diagnose(&stream, &as_path(&there)),
        probe,
    })
}

/// The settings the probe's stream ran under: the far end's (its receiver), with this host's
/// send-side sysctls (its sender).
fn as_path(there: &Settings) -> Settings {
    let mut s = there.clone();
    for name in SEND_SIDE {
        s.sysctls.remove(name);
    }
    s.sysctls.extend(read::sysctls(Path::new("/"), SEND_SIDE));
    s
}

/// The settings of `host`'s host, through its agent.
pub fn settings_of(host: &str, key_file: Option<&Path>) -> Result<Settings, Failure> {
    let key = key_file.map(crate::cli::read_key).transpose()?;
    let target = Target::resolve(host, None).map_err(|e| Failure::Runtime(e.to_string()))?;
    settings_at(&target, key)
}

/// The settings of `target`'s host, through its agent, checked against the wire's bounds.
pub fn settings_at(target: &Target, key: Option<Vec<u8>>) -> Result<Settings, Failure> {
    let json =
        controller::host_settings(target, key).map_err(|e| Failure::Runtime(e.to_string()))?;
    wire::decode(&json).map_err(|e| Failure::Runtime(format!("{}: {e}", target.name)))
}

/// The probe: rr transactions, then one stream, both to `host`'s agent.
fn probe(host: &str, key_file: Option<&Path>) -> Result<(Report, Report), Failure> {
    let key: Vec<String> = key_file
        .map(|k| vec!["--key-file".into(), k.display().to_string()])
        .unwrap_or_default();
    let with = |args: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        v.extend(key.iter().cloned());
        v
    };
    let rr = run_args(&with(&["rr", host, "-n", PROBE_TRANSACTIONS]))?;
    let stream = run_args(&with(&["stream", host, "-t", PROBE_TIME]))?;
    Ok((rr, stream))
}

/// The terminal lines for the far end: its findings, the probe, the advice on it.
pub fn list(r: &Remote) -> String {
    let names: Vec<&str> = r.interfaces.iter().map(String::as_str).collect();
    let mut s = doctor_list::list(&r.host, &names, &r.findings);
    let p = &r.probe;
    let rtt = p
        .rtt_p50_us
        .map_or("unknown".to_string(), |us| format!("{:.3} ms", us / 1000.0));
    let _ = write!(
        s,
        "\npath to {}: rtt {rtt} (median of {} rr transactions), one stream {} over {:.1} s\n",
        r.host,
        p.transactions,
        fathom_units::rate::human(p.bits_per_second, 3),
        p.seconds
    );
    s.push_str(&fathom_advisor::diagnose::list(&r.advice));
    s
}
