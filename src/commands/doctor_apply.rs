//! `fathom doctor --run N --verify --apply`: a system change the top finding names, applied
//! where it is the user's own to change: a sysctl that every network namespace has its own copy
//! of, set inside the lab namespaces of the stored test's hosts, and set back afterwards.
//! Nothing is applied outside a lab, and no other command is ever run.

use super::argv::test_args;
use crate::Failure;
use std::io;

/// The sysctls `--apply` may set: each network namespace has its own.
pub const PER_NAMESPACE: &[&str] = &[
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.core.somaxconn",
];

/// The longest value `--apply` writes.
const VALUE_MAX: usize = 128;

/// One sysctl to set: `sysctl -w NAME=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sysctl {
    /// Its name (net.ipv4.tcp_rmem).
    pub name: String,
    /// The value to write, without quotes.
    pub value: String,
}

/// The sysctl `command` sets, if it is `sysctl -w NAME=VALUE` for one of [`PER_NAMESPACE`].
pub fn parse(command: &str) -> Option<Sysctl> {
    let (name, value) = command.strip_prefix("sysctl -w ")?.split_once('=')?;
    let value = value.trim().trim_matches('\'').trim_matches('"');
    let ok = PER_NAMESPACE.contains(&name)
        && !value.is_empty()
        && value.len() <= VALUE_MAX
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '_');
    ok.then(|| Sysctl {
        name: name.to_string(),
        value: value.to_string(),
    })
}

/// The lab namespaces of the hosts the stored test `args` ran on; refused (bad usage) when it
/// did not run on lab hosts.
pub fn namespaces(args: &[String]) -> Result<Vec<String>, Failure> {
    let t = test_args(args)?;
    let c = t.common();
    let refuse = || {
        Failure::Usage(
            "--apply changes sysctls only inside a lab's namespaces, and this run's hosts are not lab hosts; run the printed command yourself".into(),
        )
    };
    let Some(server) = c.server_name() else {
        return Err(refuse());
    };
    let name = match &c.lab {
        Some(n) => n.clone(),
        None => fathom_lab::resolve_name(None).map_err(|_| refuse())?,
    };
    let lab = fathom_lab::Lab::load(&name).map_err(|_| refuse())?;
    std::iter::once(server)
        .chain(c.clients.iter().map(|h| h.trim()))
        .map(|h| lab.host(h).map(|h| h.netns.clone()).ok_or_else(refuse))
        .collect()
}

/// The path of sysctl `name` below /proc/sys.
fn path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Sysctl `name` as namespace `ns` has it.
pub fn read(ns: &str, name: &str) -> io::Result<String> {
    let p = path(name);
    fathom_lab::run_in(ns, move || {
        let v = std::fs::read_to_string(&p)?;
        Ok(v.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

/// Sets sysctl `name` to `value` in namespace `ns`.
pub fn write(ns: &str, name: &str, value: &str) -> io::Result<()> {
    let (p, v) = (path(name), value.to_string());
    fathom_lab::run_in(ns, move || std::fs::write(&p, v))
}

/// A sysctl set in some namespaces, each set back to its old value when dropped.
pub struct Applied {
    name: String,
    old: Vec<(String, String)>,
}

impl Applied {
    /// Reads `s`'s value in every namespace of `namespaces`, to set it back later.
    pub fn prepare(s: &Sysctl, namespaces: &[String]) -> Result<Applied, Failure> {
        let old = namespaces
            .iter()
            .map(|ns| Ok((ns.clone(), read(ns, &s.name)?)))
            .collect::<io::Result<_>>()
            .map_err(|e| Failure::Runtime(format!("--apply: reading {}: {e}", s.name)))?;
        Ok(Applied {
            name: s.name.clone(),
            old,
        })
    }

    /// Sets `value` everywhere, or the old values back (`None`).
    pub fn set(&self, value: Option<&str>) -> Result<(), Failure> {
        for (ns, old) in &self.old {
            write(ns, &self.name, value.unwrap_or(old))
                .map_err(|e| Failure::Runtime(format!("--apply: {} in {ns}: {e}", self.name)))?;
        }
        Ok(())
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        let _ = self.set(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_per_namespace_sysctl_with_a_plain_value_is_taken() {
        assert_eq!(
            parse("sysctl -w net.ipv4.tcp_rmem='4096 131072 67108864'"),
            Some(Sysctl {
                name: "net.ipv4.tcp_rmem".into(),
                value: "4096 131072 67108864".into()
            })
        );
        assert_eq!(
            parse("sysctl -w net.core.rmem_max=67108864"),
            None,
            "not per namespace"
        );
        assert_eq!(parse("sysctl -w net.ipv4.tcp_rmem='1; reboot'"), None);
        assert_eq!(parse("ethtool -G eth0 rx 4096"), None);
    }
}
