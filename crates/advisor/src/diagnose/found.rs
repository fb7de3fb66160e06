//! What the causes share: a finding before it becomes an [`Advice`], the host that received a
//! flow, the WAN link's parameters, and percentages and times as the text prints them.

use crate::{Confidence, Severity};
use fathom_report::model::{Advice, FlowResult, HostResult, Report};

/// One finding before it becomes an [`Advice`]: typed, so that it can be ranked.
#[derive(Clone, Debug)]
pub(super) struct Found {
    pub(super) id: &'static str,
    pub(super) severity: Severity,
    pub(super) confidence: Confidence,
    pub(super) seen: String,
    pub(super) figures: Vec<(&'static str, f64)>,
    pub(super) why: String,
    pub(super) change: String,
}

impl Found {
    pub(super) fn advice(self) -> Advice {
        Advice {
            id: self.id.into(),
            severity: self.severity.name().into(),
            confidence: self.confidence.name().into(),
            seen: self.seen,
            figures: self
                .figures
                .into_iter()
                .filter(|(_, v)| v.is_finite())
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            why: self.why,
            change: self.change,
        }
    }
}

/// The host that received flow `f`: the server for forward flows, the (first) client for
/// reverse ones.
pub(super) fn receiver_of<'a>(r: &'a Report, f: &FlowResult) -> Option<&'a HostResult> {
    match f.direction.as_str() {
        "reverse" => r.hosts.get(1).or(r.hosts.first()),
        _ => r.hosts.first(),
    }
}

/// The rate configured on the lab's WAN links the run crossed (the lowest), bits/s.
pub(super) fn link_rate(r: &Report) -> Option<f64> {
    wan_param(r, "rate").and_then(|v| fathom_units::rate::parse(&v).ok().map(|b| b as f64))
}

/// The value of WAN parameter `key` on the first link that sets it (either direction).
pub(super) fn wan_param(r: &Report, key: &str) -> Option<String> {
    r.wan.iter().find_map(|w| {
        [&w.a_to_b, &w.b_to_a].into_iter().find_map(|p| {
            p.split([',', ' '])
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, v)| *k == key && !v.is_empty() && !v.starts_with('0'))
                .map(|(_, v)| v.to_string())
        })
    })
}

/// A percentage for the text: "39%", small ones "0.4%".
pub(super) fn pct(v: f64) -> String {
    match v < 10.0 {
        true => format!("{v:.1}%"),
        false => format!("{v:.0}%"),
    }
}

/// Milliseconds from µs for the text: "100.2 ms".
pub(super) fn ms(us: f64) -> String {
    format!("{:.1} ms", us / 1000.0)
}
