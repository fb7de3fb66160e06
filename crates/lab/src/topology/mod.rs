//! Topologies: what a lab is made of, independent of its name.
//!
//! A topology is read from TOML ([`Topology::parse`], [`Topology::load`]) or made from
//! `--hosts N` ([`Topology::star`]); both paths go through the same checks in `validate`, which
//! also resolves every interface name and address, so a `Topology` value is always buildable.
//!
//! The model is nodes joined by links. A switch is a segment with a subnet; a host gets one
//! interface (`eth0`, `eth1`, …) per link and on each an address from that segment's subnet.
//! A WAN link (`[[wan]]`) is a router node `wanN` (for the N-th `[[wan]]`) with two links, one
//! to each of the nodes it joins; it forwards frames between them through the user-space WAN
//! emulator as a transparent layer-2 box, so the two nodes share one subnet as if linked directly.

mod error;
mod file;
mod ipsec;
mod subnet;
mod validate;
mod wan;

use std::net::Ipv4Addr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
pub use error::TopologyError;
pub use file::{HostEntry, LabSection, LinkEntry, SwitchEntry, TopologyFile, WanEntry};
pub use ipsec::TopologyIpsec;
pub use subnet::Subnet;
pub use wan::Wan;

/// The subnet used when a topology names none.
pub const DEFAULT_SUBNET: &str = "10.77.0.0/16";

/// The MTU used when a topology names none.
pub const DEFAULT_MTU: u32 = 1500;

/// A checked topology with every interface named and addressed.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// The lab's default subnet.
    pub subnet: Subnet,
    /// Hosts, in declaration order.
    pub hosts: Vec<HostSpec>,
    /// Switches, in declaration order.
    pub switches: Vec<SwitchSpec>,
    /// Links, in declaration order, then two for each WAN link (node to router, router to node).
    pub links: Vec<Link>,
    /// WAN links, in declaration order.
    pub wans: Vec<Wan>,
    /// The host pairs its `ipsec` keys encrypt, if any entry has one.
    pub ipsec: Option<TopologyIpsec>,
}

/// A host: a namespace with addressed interfaces, running an agent.
#[derive(Clone, Debug, PartialEq)]
pub struct HostSpec {
    /// Its name, e.g. `h1`.
    pub name: String,
    /// One interface per link, in link order.
    pub interfaces: Vec<Interface>,
}

/// A switch: a Linux bridge (named like the switch) in its own namespace.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchSpec {
    /// Its name, e.g. `sw1`.
    pub name: String,
    /// The subnet of its segment.
    pub subnet: Subnet,
}

/// An addressed interface of a host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interface {
    /// Interface name inside the host, e.g. `eth0`.
    pub name: String,
    /// Its IPv4 address.
    pub address: Ipv4Addr,
    /// The prefix length of its subnet.
    pub prefix_len: u8,
}

/// A veth pair joining two nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// The two ends, as declared.
    pub ends: [LinkEnd; 2],
    /// MTU of both ends.
    pub mtu: u32,
    /// Egress rate limit of both ends in bits per second (tbf), if any.
    pub rate_bps: Option<u64>,
}

/// One end of a link: a node and the interface name the veth gets there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkEnd {
    /// The node's name.
    pub node: String,
    /// The interface name inside the node: `ethN` on a host, the peer's name on a switch.
    pub interface: String,
}

impl Topology {
    /// Parses and checks a TOML topology.
    pub fn parse(text: &str) -> Result<Topology> {
        let file: TopologyFile =
            toml::from_str(text).map_err(|e| Error::Topology(one_line(text, &e)))?;
        Topology::from_file(file)
    }

    /// Reads, parses and checks a TOML topology file; errors name the file.
    pub fn load(path: &Path) -> Result<Topology> {
        let text =
            std::fs::read_to_string(path).context(|| format!("reading {}", path.display()))?;
        Topology::parse(&text).map_err(|e| match e {
            Error::Topology(msg) => Error::Topology(format!("{}: {msg}", path.display())),
            other => other,
        })
    }

    /// `n` hosts `h1`…`hN` on one switch `sw1`, with optional subnet, MTU and per-link rate.
    pub fn star(
        n: u32,
        subnet: Option<&str>,
        mtu: Option<u32>,
        rate: Option<&str>,
    ) -> Result<Topology> {
        let hosts = (1..=n)
            .map(|i| HostEntry {
                name: format!("h{i}"),
                address: None,
            })
            .collect();
        let links = (1..=n)
            .map(|i| LinkEntry {
                ends: vec![format!("h{i}"), "sw1".to_string()],
                mtu: None,
                rate: rate.map(str::to_string),
                ipsec: None,
            })
            .collect();
        Topology::from_file(TopologyFile {
            lab: LabSection {
                subnet: subnet.map(str::to_string),
                mtu,
            },
            hosts,
            switches: vec![SwitchEntry {
                name: "sw1".to_string(),
                subnet: None,
            }],
            links,
            wans: Vec::new(),
        })
    }

    /// `n` hosts in two segments joined by a WAN link with `wan` parameters (both directions):
    /// `h1 – wan – h2` for two hosts; for more, `h1`…`hK` on switch `sw1` and the rest on `sw2`
    /// (K = ⌈n/2⌉), the WAN link joining `sw1` and `sw2`. Subnet, MTU and rate as for
    /// [`Topology::star`]; the rate limits the hosts' links, so it needs more than two hosts.
    pub fn split(
        n: u32,
        subnet: Option<&str>,
        mtu: Option<u32>,
        rate: Option<&str>,
        wan: &str,
    ) -> Result<Topology> {
        let refuse = |msg: &str| Err(Error::Topology(msg.to_string()));
        if n < 2 {
            return refuse("--wan needs at least 2 hosts, one on each side");
        }
        if n == 2 && rate.is_some() {
            return refuse(
                "--rate: with --hosts 2 --wan, h1 and h2 are joined by the emulator alone; \
                 put rate= in the --wan parameters",
            );
        }
        let hosts = (1..=n)
            .map(|i| HostEntry {
                name: format!("h{i}"),
                address: None,
            })
            .collect();
        let (switches, links, ends) = if n == 2 {
            (Vec::new(), Vec::new(), ["h1", "h2"])
        } else {
            let switch = |name: &str| SwitchEntry {
                name: name.to_string(),
                subnet: None,
            };
            let first_side = n.div_ceil(2);
            let links = (1..=n)
                .map(|i| LinkEntry {
                    ends: vec![
                        format!("h{i}"),
                        if i <= first_side { "sw1" } else { "sw2" }.to_string(),
                    ],
                    mtu: None,
                    rate: rate.map(str::to_string),
                    ipsec: None,
                })
                .collect();
            (vec![switch("sw1"), switch("sw2")], links, ["sw1", "sw2"])
        };
        let wan = WanEntry {
            name: None,
            ends: ends.map(str::to_string).to_vec(),
            params: Some(wan.to_string()),
            a_to_b: None,
            b_to_a: None,
            mtu: None,
            ipsec: None,
        };
        Topology::from_file(TopologyFile {
            lab: LabSection {
                subnet: subnet.map(str::to_string),
                mtu,
            },
            hosts,
            switches,
            links,
            wans: vec![wan],
        })
    }

    /// Checks a topology as read and resolves its interfaces and addresses.
    pub fn from_file(file: TopologyFile) -> Result<Topology> {
        let refuse = |e: TopologyError| Error::Topology(e.to_string());
        let ipsec = ipsec::resolve(&file);
        let topology = validate::validate(file).map_err(refuse)?;
        Ok(Topology {
            ipsec: ipsec.map_err(refuse)?,
            ..topology
        })
    }
}

/// A TOML error on one line: `line 19: unknown field `speed`, expected one of …`.
fn one_line(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', " ");
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}

/// A link's rate in bits per second: 1K to 10T (a tbf on both ends).
fn parse_rate(text: &str) -> std::result::Result<u64, TopologyError> {
    fathom_units::rate::parse_in(text, 1_000..=10_000_000_000_000)
        .map_err(|e| TopologyError::Rate(e.to_string()))
}
