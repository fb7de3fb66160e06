//! Topologies: what a lab is made of, independent of its name.
//!
//! A topology is read from TOML ([`Topology::parse`], [`Topology::load`]) or made from
//! `--hosts N` ([`Topology::star`]), in `make.rs`; every way goes through the same checks in
//! `validate`, which also resolves every interface name and address, so a `Topology` value is
//! always buildable.
//!
//! The model is nodes joined by links. A switch is a segment with a subnet; a host gets one
//! interface (`eth0`, `eth1`, …) per link and on each an address from that segment's subnet.
//! A WAN link (`[[wan]]`) is a router node `wanN` (for the N-th `[[wan]]`) with two links, one
//! to each of the nodes it joins; it forwards frames between them through the user-space WAN
//! emulator as a transparent layer-2 box, so the two nodes share one subnet as if linked directly.

mod error;
mod file;
mod ipsec;
mod make;
mod subnet;
mod validate;
mod wan;

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

pub use error::TopologyError;
pub use file::{HostEntry, LabSection, LinkEntry, SwitchEntry, TopologyFile, WanEntry};
pub use ipsec::TopologyIpsec;
pub use subnet::{Subnet, SubnetError};
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

/// A link's rate in bits per second: 1K to 10T (a tbf on both ends).
fn parse_rate(text: &str) -> std::result::Result<u64, TopologyError> {
    fathom_units::rate::parse_in(text, 1_000..=10_000_000_000_000)
        .map_err(|e| TopologyError::Rate(e.to_string()))
}
