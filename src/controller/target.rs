//! Where the agent is: "HOST", "HOST:PORT", "[v6]:PORT", or nothing (the embedded agent).

use super::error::TargetError;
use fathom_proto::DEFAULT_PORT;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// A resolved agent address.
#[derive(Clone, Debug)]
pub struct Target {
    /// Address of its control port (inside its namespace, for a lab host).
    pub addr: SocketAddr,
    /// How to call it in messages and results.
    pub name: String,
    /// True for the in-process agent.
    pub embedded: bool,
    /// The lab namespace to connect from, for a lab host.
    pub netns: Option<String>,
    /// The key to use with it (a lab's own key), if not the command line's.
    pub key: Option<Vec<u8>>,
    /// Its group in per-group results (from `--agents-from`), if any.
    pub group: Option<String>,
}

/// Who takes part in a test: the server agent, and the client agents (none: the controller's
/// own end is the client).
#[derive(Clone, Debug)]
pub struct Topology {
    /// The accepting end.
    pub server: Target,
    /// The connecting ends.
    pub clients: Vec<Target>,
}

impl Target {
    /// A lab host's agent, if `name` is a host of `lab`.
    pub fn in_lab(name: &str, lab: &fathom_lab::Lab) -> Result<Option<Target>, TargetError> {
        let Some(host) = lab.host(name) else {
            return Ok(None);
        };
        let addr = host.agent_addr();
        let key = crate::cli::read_key(&lab.key_file())?;
        Ok(Some(Target {
            addr,
            name: name.to_string(),
            embedded: false,
            netns: Some(host.netns.clone()),
            key: Some(key),
            group: None,
        }))
    }

    /// A lab host's agent when `lab` has one named `spec`, else an agent at HOST[:PORT].
    pub fn lab_or_resolve(
        spec: &str,
        lab: Option<&fathom_lab::Lab>,
        ipv6: Option<bool>,
    ) -> Result<Target, TargetError> {
        match lab.map(|l| Self::in_lab(spec, l)).transpose()?.flatten() {
            Some(t) => Ok(t),
            None => Self::resolve(spec, ipv6),
        }
    }

    /// Resolves `spec`; `ipv6` restricts the family (Some(true) = v6 only, Some(false) = v4 only).
    pub fn resolve(spec: &str, ipv6: Option<bool>) -> Result<Target, TargetError> {
        let (host, port) = split_host_port(spec)?;
        let addrs: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|source| TargetError::Resolve {
                host: host.clone(),
                source,
            })?
            .filter(|a| ipv6.is_none_or(|v6| a.is_ipv6() == v6))
            .collect();
        let addr = *addrs.first().ok_or_else(|| TargetError::NoAddress {
            family: if ipv6 == Some(true) { "IPv6" } else { "IPv4" },
            host,
        })?;
        Ok(Target {
            addr,
            name: spec.to_string(),
            embedded: false,
            netns: None,
            key: None,
            group: None,
        })
    }
}

/// Splits "host", "host:port", "[v6]", "[v6]:port", or a bare IPv6 address.
fn split_host_port(spec: &str) -> Result<(String, u16), TargetError> {
    let port = |p: &str| {
        p.parse::<u16>().map_err(|_| TargetError::Port {
            spec: spec.into(),
            port: p.into(),
        })
    };
    if let Some(rest) = spec.strip_prefix('[') {
        let (h, tail) = rest
            .split_once(']')
            .ok_or_else(|| TargetError::Bracket(spec.into()))?;
        return match tail.strip_prefix(':') {
            Some(p) => Ok((h.to_string(), port(p)?)),
            None if tail.is_empty() => Ok((h.to_string(), DEFAULT_PORT)),
            None => Err(TargetError::NotHostPort(spec.into())),
        };
    }
    if spec.parse::<IpAddr>().is_ok() {
        return Ok((spec.to_string(), DEFAULT_PORT));
    }
    match spec.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => Ok((h.to_string(), port(p)?)),
        Some(_) => Err(TargetError::NotHostPort(spec.into())),
        None if spec.is_empty() => Err(TargetError::Empty),
        None => Ok((spec.to_string(), DEFAULT_PORT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(split_host_port("h").unwrap(), ("h".into(), 5301));
        assert_eq!(split_host_port("h:9").unwrap(), ("h".into(), 9));
        assert_eq!(split_host_port("::1").unwrap(), ("::1".into(), 5301));
        assert_eq!(split_host_port("[::1]:7").unwrap(), ("::1".into(), 7));
        assert!(split_host_port("h:x").is_err());
        assert!(split_host_port(":5").is_err());
    }

    #[test]
    fn resolves_loopback_and_filters_family() {
        assert!(Target::resolve("127.0.0.1:9", None).unwrap().addr.is_ipv4());
        assert!(Target::resolve("127.0.0.1", Some(true)).is_err());
    }
}
