//! A [`Settings`] snapshot as it travels between hosts: an agent reads its own settings and
//! sends them as JSON ([`encode`]); the controller takes them back with [`decode`], which refuses
//! a snapshot beyond the bounds below before any rule reads it. The frame that carries the text
//! is capped by the control protocol (`fathom_proto::SETTINGS_MAX`) before it is parsed.

use crate::settings::sysctl_names;
use crate::Settings;
use std::fmt;

/// The most interfaces a snapshot holds.
pub const MAX_IFACES: usize = 32;
/// The most interrupts of one interface.
pub const MAX_IRQS: usize = 128;
/// The most offload features of one interface.
pub const MAX_OFFLOADS: usize = 128;
/// The most CPUs with a governor, and the most CPUs a host may say it has.
pub const MAX_CPUS: usize = 4096;
/// The most idle states.
pub const MAX_IDLE: usize = 32;
/// The most NUMA nodes.
pub const MAX_NODES: usize = 1024;
/// The longest text (a name or a value), in bytes.
pub const MAX_TEXT: usize = 128;

/// A snapshot that does not fit the bounds, or is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// Not the JSON of a snapshot.
    Malformed(String),
    /// A field beyond its bound: (field, bound).
    Bound(&'static str, usize),
    /// A sysctl the advisor does not read.
    Sysctl(String),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Malformed(e) => write!(f, "the settings report is malformed: {e}"),
            WireError::Bound(field, most) => {
                write!(f, "the settings report's {field} exceeds {most}")
            }
            WireError::Sysctl(name) => {
                let name: String = name.chars().take(MAX_TEXT).collect();
                write!(
                    f,
                    "the settings report names a sysctl the advisor does not read: {name}"
                )
            }
        }
    }
}

impl std::error::Error for WireError {}

/// `s` as JSON, cut to the bounds first (the interfaces, interrupts and offloads beyond them
/// are left out, long texts shortened), so that [`decode`] takes it.
pub fn encode(s: &Settings) -> String {
    let mut s = s.clone();
    let cut = |t: &mut String| {
        if t.len() > MAX_TEXT {
            let mut end = MAX_TEXT;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
    };
    s.sysctls.values_mut().for_each(cut);
    s.ifaces.truncate(MAX_IFACES);
    for i in &mut s.ifaces {
        cut(&mut i.name);
        while i.irqs.len() > MAX_IRQS {
            i.irqs.pop_last();
        }
        i.irqs.values_mut().for_each(cut);
        if let Some(o) = &mut i.offloads {
            while o.len() > MAX_OFFLOADS {
                o.pop_last();
            }
            o.retain(|k, _| k.len() <= MAX_TEXT);
        }
    }
    s.cpus = s.cpus.min(MAX_CPUS);
    while s.governors.len() > MAX_CPUS {
        s.governors.pop_last();
    }
    s.governors.values_mut().for_each(cut);
    s.idle_states.truncate(MAX_IDLE);
    s.idle_states.iter_mut().for_each(|i| cut(&mut i.name));
    s.numa_nodes = s.numa_nodes.min(MAX_NODES);
    serde_json::to_string(&s).unwrap_or_default()
}

/// The snapshot in `json`, refused when it is not one or exceeds a bound.
pub fn decode(json: &str) -> Result<Settings, WireError> {
    let s: Settings =
        serde_json::from_str(json).map_err(|e| WireError::Malformed(e.to_string()))?;
    check(&s)?;
    Ok(s)
}

/// Checks every bound of `s`.
fn check(s: &Settings) -> Result<(), WireError> {
    let within = |n: usize, field, most| match n <= most {
        true => Ok(()),
        false => Err(WireError::Bound(field, most)),
    };
    let text = |t: &str, field| within(t.len(), field, MAX_TEXT);
    for (name, value) in &s.sysctls {
        if !sysctl_names().any(|n| n == name) {
            return Err(WireError::Sysctl(name.clone()));
        }
        text(value, "sysctl value")?;
    }
    within(s.ifaces.len(), "interfaces", MAX_IFACES)?;
    for i in &s.ifaces {
        text(&i.name, "interface name")?;
        within(i.irqs.len(), "interrupts of an interface", MAX_IRQS)?;
        for cpus in i.irqs.values() {
            text(cpus, "interrupt affinity")?;
        }
        let offloads = i.offloads.as_ref();
        within(offloads.map_or(0, |o| o.len()), "offloads", MAX_OFFLOADS)?;
        for k in offloads.into_iter().flat_map(|o| o.keys()) {
            text(k, "offload name")?;
        }
    }
    within(s.cpus, "CPU count", MAX_CPUS)?;
    within(s.governors.len(), "governors", MAX_CPUS)?;
    for g in s.governors.values() {
        text(g, "governor")?;
    }
    within(s.idle_states.len(), "idle states", MAX_IDLE)?;
    for i in &s.idle_states {
        text(&i.name, "idle state name")?;
    }
    within(s.numa_nodes, "NUMA nodes", MAX_NODES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Iface;

    fn sample() -> Settings {
        let mut s = Settings {
            cpus: 8,
            ..Settings::default()
        };
        s.sysctls
            .insert("net.core.rmem_max".into(), "212992".into());
        s.ifaces.push(Iface {
            name: "eth0".into(),
            mtu: Some(1500),
            rx_queues: 1,
            ..Iface::default()
        });
        s
    }

    #[test]
    fn a_snapshot_comes_back_as_it_went() {
        let s = sample();
        assert_eq!(decode(&encode(&s)), Ok(s));
    }

    #[test]
    fn encode_cuts_to_the_bounds_that_decode_checks() {
        let mut s = sample();
        s.ifaces = vec![s.ifaces[0].clone(); MAX_IFACES + 5];
        s.ifaces[0].irqs = (0..MAX_IRQS as u32 + 9).map(|n| (n, "0".into())).collect();
        s.governors = (0..MAX_CPUS + 1).map(|c| (c, "x".repeat(400))).collect();
        let back = decode(&encode(&s)).unwrap();
        assert_eq!(back.ifaces.len(), MAX_IFACES);
        assert_eq!(back.ifaces[0].irqs.len(), MAX_IRQS);
        assert_eq!(back.governors[&0].len(), MAX_TEXT);
    }

    #[test]
    fn a_peer_beyond_a_bound_or_off_the_list_is_refused() {
        let mut s = sample();
        s.cpus = MAX_CPUS + 1;
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(decode(&json), Err(WireError::Bound("CPU count", MAX_CPUS)));
        let mut s = sample();
        s.sysctls.insert("kernel.evil".into(), "1".into());
        let json = serde_json::to_string(&s).unwrap();
        assert!(decode(&json)
            .unwrap_err()
            .to_string()
            .contains("kernel.evil"));
        assert!(matches!(
            decode("{\"cpus\": -1}"),
            Err(WireError::Malformed(_))
        ));
    }
}
