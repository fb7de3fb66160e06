//! `dns:NAME[:PORT]`: every A and AAAA record of NAME (a headless Service's name in
//! Kubernetes), each an agent on PORT; or, for a name in SRV form (`_control._tcp.NAME`), every
//! SRV record's target and port. Answers too large for UDP are fetched again over TCP (the
//! resolver does it on a truncated answer), so hundreds of records are all found.
//!
//! The resolver is the system's (`/etc/resolv.conf`) unless `FATHOM_DNS_SERVER=IP[:PORT]`
//! names the one name server to ask.

use super::{Agent, Error, SourceError};
use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolverConfig,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::NetError;
use hickory_resolver::proto::rr::RData;
use hickory_resolver::{Resolver, TokioResolver};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// The environment variable naming the one name server to ask.
pub const SERVER_ENV: &str = "FATHOM_DNS_SERVER";

/// A name to look up, and the agents' port for address records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The name; SRV form when it starts with `_`.
    pub name: String,
    /// The agents' port (address records only; none: the default port).
    pub port: Option<u16>,
}

impl std::str::FromStr for Query {
    type Err = SourceError;

    fn from_str(s: &str) -> Result<Query, SourceError> {
        let (name, port) = match s.rsplit_once(':') {
            Some((n, p)) => {
                let p = p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                    SourceError::DnsPort {
                        query: s.into(),
                        port: p.into(),
                    }
                })?;
                (n, Some(p))
            }
            None => (s, None),
        };
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ',') {
            return Err(SourceError::DnsName(s.into()));
        }
        if name.starts_with('_') && port.is_some() {
            return Err(SourceError::SrvPort(s.into()));
        }
        Ok(Query {
            name: name.to_string(),
            port,
        })
    }
}

impl Query {
    /// Looks the name up once, within `within`, asking the name server `FATHOM_DNS_SERVER`
    /// names, else the system's; a name without records lists no agents.
    pub fn list(&self, within: Duration) -> Result<Vec<Agent>, Error> {
        self.list_at(std::env::var(SERVER_ENV).ok().as_deref(), within)
    }

    /// As [`Query::list`], asking the name server at `server` (`IP[:PORT]`), else the system's.
    /// The whole look (the SRV records and every target's addresses) ends within `within`.
    pub fn list_at(&self, server: Option<&str>, within: Duration) -> Result<Vec<Agent>, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Runtime(format!("dns: cannot start the resolver: {e}")))?;
        let resolver = resolver(server, within)?;
        let look = async { tokio::time::timeout(within, self.lookup(&resolver)).await };
        let found = runtime.block_on(look);
        match found {
            Err(_) => Err(Error::Runtime(format!(
                "dns:{}: no complete answer within {} (--discovery-timeout): the name server, \
                 or the addresses of an SRV target, did not answer",
                self.name,
                seconds(within)
            ))),
            Ok(Err(e)) if e.is_no_records_found() => Ok(Vec::new()),
            Ok(other) => other.map_err(|e| Error::Runtime(format!("dns:{}: {e}", self.name))),
        }
    }

    async fn lookup(&self, r: &TokioResolver) -> Result<Vec<Agent>, NetError> {
        if !self.name.starts_with('_') {
            let ips = r.lookup_ip(self.name.as_str()).await?;
            return Ok(ips
                .iter()
                .map(|ip| agent(ip.to_string(), ip, self.port))
                .collect());
        }
        let mut agents = Vec::new();
        let srv = r.srv_lookup(self.name.as_str()).await?;
        for rec in srv.answers() {
            let RData::SRV(s) = &rec.data else { continue };
            let target = s.target.to_utf8();
            let target = target.trim_end_matches('.');
            for ip in r.lookup_ip(s.target.clone()).await?.iter() {
                agents.push(agent(target.to_string(), ip, Some(s.port)));
            }
        }
        Ok(agents)
    }
}

/// An agent at `ip` (and `port`), named `name`.
fn agent(name: String, ip: IpAddr, port: Option<u16>) -> Agent {
    let addr = match port {
        Some(p) => SocketAddr::new(ip, p).to_string(),
        None if ip.is_ipv6() => format!("[{ip}]"),
        None => ip.to_string(),
    };
    Agent {
        name: if port.is_some() && name == ip.to_string() {
            addr.clone()
        } else {
            name
        },
        addr,
        group: None,
    }
}

/// `d` in seconds, as a person reads it ("5 s", "0.5 s").
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// The system's resolver, or one asking only `server`; A and AAAA both asked, each query
/// waiting at most 5 s and never past `within`.
fn resolver(server: Option<&str>, within: Duration) -> Result<TokioResolver, Error> {
    let mut builder = match server {
        Some(s) => Resolver::builder_with_config(
            ResolverConfig::from_name_servers(vec![name_server(s)?]),
            TokioRuntimeProvider::default(),
        ),
        None => Resolver::builder_tokio().map_err(|e| {
            Error::Runtime(format!(
                "dns: cannot read the system's resolver configuration: {e}"
            ))
        })?,
    };
    let opts = builder.options_mut();
    opts.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
    opts.timeout = within.min(Duration::from_secs(5));
    builder
        .build()
        .map_err(|e| Error::Runtime(format!("dns: cannot start the resolver: {e}")))
}

/// `IP[:PORT]` (port 53 by default) as a name server asked over UDP, then TCP.
fn name_server(s: &str) -> Result<NameServerConfig, Error> {
    let addr = s
        .parse::<SocketAddr>()
        .or_else(|_| s.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| Error::Usage(format!("{SERVER_ENV}: '{s}' is not IP[:PORT]")))?;
    let connections = [ConnectionConfig::udp(), ConnectionConfig::tcp()]
        .into_iter()
        .map(|mut c| {
            c.port = addr.port();
            c
        })
        .collect();
    Ok(NameServerConfig::new(addr.ip(), true, connections))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ports() {
        let q: Query = "agents.ns.svc:5302".parse().unwrap();
        assert_eq!((q.name.as_str(), q.port), ("agents.ns.svc", Some(5302)));
        assert_eq!("agents".parse::<Query>().unwrap().port, None);
        assert!("_control._tcp.agents:5".parse::<Query>().is_err());
        assert!("agents:0".parse::<Query>().is_err());
        assert!(":5".parse::<Query>().is_err());
    }

    #[test]
    fn agents_are_named_by_address_and_port() {
        let a = agent("10.0.0.1".into(), "10.0.0.1".parse().unwrap(), Some(7));
        assert_eq!(
            (a.name.as_str(), a.addr.as_str()),
            ("10.0.0.1:7", "10.0.0.1:7")
        );
        let v6 = agent("::1".into(), "::1".parse().unwrap(), None);
        assert_eq!(v6.addr, "[::1]");
        let srv = agent("node1".into(), "10.0.0.2".parse().unwrap(), Some(9));
        assert_eq!(
            (srv.name.as_str(), srv.addr.as_str()),
            ("node1", "10.0.0.2:9")
        );
    }

    /// One SRV target that never resolved failed discovery after 15 s despite
    /// `--discovery-timeout 5s`: a look ends within the time it is given.
    #[test]
    fn a_name_server_that_never_answers_is_given_up_on_in_time() {
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let server = silent.local_addr().unwrap().to_string();
        let q: Query = "_control._tcp.agents.example".parse().unwrap();
        let start = std::time::Instant::now();
        let e = q
            .list_at(Some(&server), Duration::from_secs(2))
            .unwrap_err();
        let took = start.elapsed();
        assert!(took < Duration::from_secs(4), "gave up after {took:?}");
        assert!(
            e.to_string()
                .contains("no complete answer within 2 s (--discovery-timeout)"),
            "{e}"
        );
    }
}
