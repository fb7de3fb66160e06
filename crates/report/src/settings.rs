//! The settings of two results that `fathom compare` names when they differ: for runs, every
//! option the report echoes (`test.*`, found by name so a new option is compared without a
//! change here) and the WAN links' parameters; for series, their shared options and their swept
//! options. A difference in settings makes a difference in figures less telling, so a
//! comparison lists them (its `differences`).

use crate::model::Report;
use crate::series::{Axis, Series};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One setting that differs between A and B.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Difference {
    /// The setting, as the report's JSON names it (`parallel`, `rr.request_size`,
    /// `wan.h1-h2`), or `options` / `swept` for series.
    pub setting: String,
    /// A's value as text (`none` when A has no such setting).
    pub a: String,
    /// B's value.
    pub b: String,
}

/// Echoed fields that say when or where a run ran rather than how it was set up.
const NOT_SETTINGS: &[&str] = &["kind", "started_unix_s", "embedded_agent"];

/// The settings two runs differ in, in the report's order.
pub fn of_runs(a: &Report, b: &Report) -> Vec<Difference> {
    let (sa, sb) = (run_settings(a), run_settings(b));
    let mut names: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let none = "none".to_string();
            let (va, vb) = (sa.get(n).unwrap_or(&none), sb.get(n).unwrap_or(&none));
            (va != vb).then(|| difference(n, va.clone(), vb.clone()))
        })
        .collect()
}

/// The settings two series differ in: the options every point shares, and what they sweep.
pub fn of_series(a: &Series, b: &Series) -> Vec<Difference> {
    let swept = |s: &Series| {
        s.axes
            .iter()
            .map(Axis::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    [
        ("options", a.args.join(" "), b.args.join(" ")),
        ("swept", swept(a), swept(b)),
    ]
    .into_iter()
    .filter(|(_, x, y)| x != y)
    .map(|(n, x, y)| difference(n, or_none(x), or_none(y)))
    .collect()
}

/// The differences as one line: `parallel 1 vs 4, nodelay off vs on`.
pub fn summary(d: &[Difference]) -> String {
    d.iter()
        .map(|d| format!("{} {} vs {}", d.setting, d.a, d.b))
        .collect::<Vec<_>>()
        .join(", ")
}

fn difference(setting: &str, a: String, b: String) -> Difference {
    Difference {
        setting: setting.to_string(),
        a,
        b,
    }
}

fn or_none(text: String) -> String {
    if text.is_empty() {
        "none".into()
    } else {
        text
    }
}

/// A run's settings by name: its echoed options flattened (`rr.request_size`; sizes in bytes
/// written as `64K`), and each WAN link's parameters (`wan.h1-h2`).
fn run_settings(r: &Report) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(Value::Object(test)) = serde_json::to_value(&r.test) {
        for (k, v) in test {
            if !NOT_SETTINGS.contains(&k.as_str()) {
                flatten(&k, &v, &mut out);
            }
        }
    }
    if r.test.embedded_agent {
        out.insert("agent".into(), "in-process".into());
    }
    for w in &r.wan {
        out.insert(
            format!("wan.{}", w.name),
            format!("{} / {}", w.a_to_b, w.b_to_a),
        );
    }
    out
}

fn flatten(name: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&format!("{name}.{k}"), x, out);
            }
        }
        Value::Null => {
            out.insert(name.to_string(), "none".into());
        }
        Value::Bool(b) => {
            out.insert(name.to_string(), if *b { "on" } else { "off" }.into());
        }
        Value::String(s) => {
            out.insert(name.to_string(), s.clone());
        }
        Value::Number(n) => {
            let bytes = ["size", "buf", "bytes"].iter().any(|s| name.ends_with(s));
            let text = match n.as_u64() {
                Some(b) if bytes => fathom_units::size::format(b),
                _ => n.to_string(),
            };
            out.insert(name.to_string(), text);
        }
        other => {
            out.insert(name.to_string(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_differ_in_the_options_they_echo() {
        let mut a = Report::default();
        a.test.kind = "stream".into();
        a.test.parallel = 1;
        a.test.started_unix_s = 1.0;
        let mut b = a.clone();
        b.test.parallel = 4;
        b.test.nodelay = true;
        b.test.sndbuf = Some(1 << 20);
        b.test.started_unix_s = 2.0;
        let d = of_runs(&a, &b);
        assert_eq!(
            summary(&d),
            "nodelay off vs on, parallel 1 vs 4, sndbuf none vs 1M"
        );
        assert!(of_runs(&a, &a).is_empty());
    }

    #[test]
    fn series_differ_in_options_and_axes() {
        let axis = |v: &str| Axis {
            name: "buffer".into(),
            values: vec![v.into()],
        };
        let a = Series {
            args: vec!["-t".into(), "5s".into()],
            axes: vec![axis("64K")],
            ..Series::default()
        };
        let b = Series {
            args: vec!["-t".into(), "5s".into(), "-P".into(), "2".into()],
            axes: vec![axis("1M")],
            ..Series::default()
        };
        assert_eq!(
            summary(&of_series(&a, &b)),
            "options -t 5s vs -t 5s -P 2, swept buffer=64K vs buffer=1M"
        );
    }
}
