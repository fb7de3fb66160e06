//! Why a topology is refused: [`TopologyError`], one variant per mistake, each carrying the
//! node, link, key or value at fault. The lab's [`crate::Error::Topology`] carries its text.

use super::subnet::{Subnet, SubnetError};
use std::net::Ipv4Addr;

/// Longest WAN link name (it names a control socket file too).
pub(super) const MAX_WAN_NAME: usize = 32;

/// A Linux bridge takes at most this many ports.
pub(super) const MAX_BRIDGE_PORTS: usize = 1024;

/// What is wrong with a topology (file or flags); the text is one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// A subnet that is not `ADDRESS/PREFIX` with a usable prefix.
    #[error(transparent)]
    Subnet(#[from] SubnetError),
    /// An MTU out of range.
    #[error("mtu {0}: must be 68 to 65535")]
    Mtu(u32),
    /// A rate that does not parse or is out of range.
    #[error("rate {0}")]
    Rate(String),
    /// No host at all.
    #[error("no [[host]]: a lab needs at least one host")]
    NoHost,
    /// An `ends` entry that does not name two nodes.
    #[error("{0}: 'ends' needs exactly two node names")]
    Ends(String),
    /// Something wrong with one link.
    #[error("link {a}-{b}: {error}")]
    Link {
        /// One end.
        a: String,
        /// The other end.
        b: String,
        /// What is wrong.
        error: Box<TopologyError>,
    },
    /// Something wrong with one WAN link.
    #[error("wan {name}: {error}")]
    Wan {
        /// The WAN link's name.
        name: String,
        /// What is wrong.
        error: Box<TopologyError>,
    },
    /// Two WAN links of one name.
    #[error("duplicate wan name '{0}'; give one of them another `name`")]
    DuplicateWan(String),
    /// A WAN link's own name that is not a usable name.
    #[error(
        "wan name '{0}': use 1-{MAX_WAN_NAME} letters, digits, '_' or '-', starting with \
         a letter or digit"
    )]
    WanName(String),
    /// WAN parameters that do not parse, under the key (`params`, `a_to_b`, `b_to_a`).
    #[error("{key}: {message}")]
    WanParams {
        /// The entry's key.
        key: &'static str,
        /// What is wrong, naming the parameter.
        message: String,
    },
    /// A switch with more ports than a bridge takes.
    #[error("switch {0} has more than {MAX_BRIDGE_PORTS} links")]
    SwitchPorts(String),
    /// A node name that is not a usable name (the text says why).
    #[error("{0}")]
    NodeName(String),
    /// Two nodes of one name.
    #[error("duplicate node name '{0}'")]
    DuplicateNode(String),
    /// A node named like a WAN link's router.
    #[error(
        "node name '{router}' is taken by the router of [[wan]] number {number}; rename the node"
    )]
    RouterName {
        /// The router's name.
        router: String,
        /// The `[[wan]]`'s number, from 1.
        number: usize,
    },
    /// A link to a node that does not exist.
    #[error("unknown node '{0}'")]
    UnknownNode(String),
    /// An `ipsec` key that names no suite, no hosts, or another suite than the others.
    #[error("{0}")]
    Ipsec(String),
    /// A link from a node to itself.
    #[error("a link needs two different nodes")]
    SameNode,
    /// Two links between one pair of nodes.
    #[error("duplicate: {0} and {1} are already joined by a link or WAN link")]
    AlreadyJoined(String, String),
    /// Two switches of different subnets linked.
    #[error("linked switches must share a subnet")]
    SwitchSubnets,
    /// A link that closes a loop of switches.
    #[error("it closes a loop of switches, which would carry broadcasts forever")]
    SwitchLoop,
    /// A host with no link.
    #[error("host {0} has no [[link]] or [[wan]]")]
    Unlinked(String),
    /// A host with two links into one subnet.
    #[error("host {host} has two links into subnet {subnet}")]
    TwoLinks {
        /// The host.
        host: String,
        /// The subnet.
        subnet: Subnet,
    },
    /// A host address that is not an IPv4 address.
    #[error("host {host}: address '{text}' is not an IPv4 address")]
    NotIpv4 {
        /// The host.
        host: String,
        /// The address as written.
        text: String,
    },
    /// A host address outside its subnet's host addresses.
    #[error("host {host}: address {addr} is not a host address of {subnet}")]
    NotHostAddress {
        /// The host.
        host: String,
        /// The address.
        addr: Ipv4Addr,
        /// The subnet of its first link.
        subnet: Subnet,
    },
    /// A subnet too small for the host's number.
    #[error("subnet {subnet} has no room for host {host} (host number {number})")]
    NoRoom {
        /// The subnet.
        subnet: Subnet,
        /// The host.
        host: String,
        /// The host's number, from 1.
        number: usize,
    },
    /// One address given to two hosts.
    #[error("address {addr} is given to both {first} and {second}")]
    SharedAddress {
        /// The address.
        addr: Ipv4Addr,
        /// The host that has it first.
        first: String,
        /// The other host.
        second: String,
    },
}
