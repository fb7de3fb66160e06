//! `fathom doctor --lab LAB`: every lab host's settings through its agent (the lab's key), and
//! every emulated link's parameters against the hosts at its ends. It sends no test traffic.

use super::doctor_list::{self, finding_lines};
use super::doctor_remote::settings_at;
use crate::controller::Target;
use crate::Failure;
use fathom_advisor::links::{self, Link};
use fathom_advisor::{findings, Confidence, Finding, Settings, Severity};
use fathom_wan::{LinkParams, LossModel};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One lab host, as `fathom doctor --json` shows it under `lab.hosts`.
#[derive(Serialize)]
pub struct LabHost {
    /// Its name in the lab.
    pub host: String,
    /// The interfaces its agent looked at.
    pub interfaces: Vec<String>,
    /// The findings on its settings, worst first.
    pub findings: Vec<Finding>,
}

/// One emulated link, as `fathom doctor --json` shows it under `lab.links`.
#[derive(Serialize)]
pub struct LabLink {
    /// Its name.
    pub name: String,
    /// The nodes it joins, A then B.
    pub ends: [String; 2],
    /// The emulator's parameters from A to B.
    pub a_to_b: String,
    /// From B to A.
    pub b_to_a: String,
    /// The findings on it, worst first.
    pub findings: Vec<Finding>,
}

/// The lab, as `fathom doctor --json` shows it under `lab`.
#[derive(Serialize)]
pub struct LabDoctor {
    /// The lab's name.
    pub name: String,
    /// Its hosts.
    pub hosts: Vec<LabHost>,
    /// Its emulated links.
    pub links: Vec<LabLink>,
}

/// Reads every host of lab `name` through its agent and looks at every link.
pub fn lab(name: &str) -> Result<LabDoctor, Failure> {
    let lab =
        fathom_lab::Lab::load(name).map_err(|e| Failure::Runtime(format!("--lab {name}: {e}")))?;
    let wans =
        fathom_lab::wan_links(&lab).map_err(|e| Failure::Runtime(format!("--lab {name}: {e}")))?;
    let mut settings: BTreeMap<String, Settings> = BTreeMap::new();
    let mut hosts = Vec::new();
    for h in lab.hosts() {
        let target = Target::in_lab(&h.name, &lab)
            .map_err(|e| Failure::Runtime(e.to_string()))?
            .ok_or_else(|| Failure::Runtime(format!("--lab {name}: no host {}", h.name)))?;
        let s = settings_at(&target, None)?;
        let mut found = findings(&s);
        if wans.iter().any(|w| w.ends.contains(&h.name)) {
            found.iter_mut().for_each(the_labs_own);
            found.sort_by_key(|f| (f.severity, f.confidence));
        }
        hosts.push(LabHost {
            host: h.name.clone(),
            interfaces: s.ifaces.iter().map(|i| i.name.clone()).collect(),
            findings: found,
        });
        settings.insert(h.name.clone(), s);
    }
    let links = wans
        .into_iter()
        .map(|w| {
            let link = folded(&w.name, &w.ends, &w.params.a_to_b, &w.params.b_to_a);
            let ends = [0, 1].map(|k| settings.get(&w.ends[k]));
            let mut found = links::findings(&link, ends);
            found.sort_by_key(|f| (f.severity, f.confidence));
            LabLink {
                name: w.name,
                ends: w.ends,
                a_to_b: w.params.a_to_b,
                b_to_a: w.params.b_to_a,
                findings: found,
            }
        })
        .collect();
    Ok(LabDoctor {
        name: name.to_string(),
        hosts,
        links,
    })
}

/// On a host facing a WAN emulator, offloads are off and the MTU is the topology's on purpose
/// (the emulator forwards frames in user space): those findings become notes that say so.
fn the_labs_own(f: &mut Finding) {
    if matches!(f.id, "offload" | "mtu") {
        f.severity = Severity::Note;
        f.confidence = Confidence::Low;
        f.why = format!(
            "the lab set this on purpose (its WAN emulator forwards frames in user space, and the topology sets each link's MTU): {}",
            f.why
        );
    }
}

/// A link's two directions folded into what the advisor needs; a direction whose parameters do
/// not parse counts as adding nothing.
fn folded(name: &str, ends: &[String; 2], a_to_b: &str, b_to_a: &str) -> Link {
    let dirs: Vec<LinkParams> = [a_to_b, b_to_a]
        .iter()
        .map(|p| p.parse().unwrap_or_default())
        .collect();
    Link {
        name: name.to_string(),
        ends: ends.clone(),
        rtt_ms: dirs.iter().map(|d| d.delay.as_secs_f64() * 1000.0).sum(),
        rate_bps: dirs.iter().filter_map(|d| d.rate_bps).min(),
        loss: dirs.iter().map(|d| mean_loss(&d.loss)).fold(0.0, f64::max),
        params: format!("{a_to_b} / {b_to_a}"),
    }
}

/// The long-run share of frames a loss model drops.
fn mean_loss(m: &LossModel) -> f64 {
    match *m {
        LossModel::None => 0.0,
        LossModel::Random(p) => p,
        LossModel::GilbertElliott {
            p,
            r,
            loss_bad,
            loss_good,
        } => {
            let bad = if p + r > 0.0 { p / (p + r) } else { 0.0 };
            bad * loss_bad + (1.0 - bad) * loss_good
        }
    }
}

/// The terminal lines: each host's findings, then each link's.
pub fn list(d: &LabDoctor) -> String {
    let mut s = String::new();
    for h in &d.hosts {
        let names: Vec<&str> = h.interfaces.iter().map(String::as_str).collect();
        let host = format!("{} in lab {}", h.host, d.name);
        s.push('\n');
        s.push_str(&doctor_list::list(&host, &names, &h.findings));
    }
    for l in &d.links {
        let _ = writeln!(
            s,
            "\nlab {} link {} ({} -> {}: {}; back: {}): {} finding(s)",
            d.name,
            l.name,
            l.ends[0],
            l.ends[1],
            l.a_to_b,
            l.b_to_a,
            l.findings.len()
        );
        finding_lines(&mut s, &l.findings);
    }
    s
}
