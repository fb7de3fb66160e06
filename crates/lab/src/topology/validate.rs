//! Checks a topology file and resolves interface names and addresses.
//!
//! Addressing: the n-th `[[host]]` gets host address n of each segment it joins (`h1` =
//! `10.77.0.1` in `10.77.0.0/16`); a host's optional `address` replaces that of its first
//! interface. A link to a switch is in the switch's subnet; a host-to-host link is in the lab's.
//! A WAN link is addressed as a direct link between its two ends would be.
//!
//! Switches forward every frame they receive and so do WAN routers, so a cycle of switches and
//! WAN links would carry broadcasts around forever: a link or WAN link that closes one is refused.

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;

use super::error::{TopologyError, MAX_BRIDGE_PORTS};
use super::wan::{self, Wan};
use super::{parse_rate, HostSpec, Interface, Link, LinkEnd, Subnet, SwitchSpec, Topology};
use super::{HostEntry, LinkEntry, TopologyFile, WanEntry, DEFAULT_MTU, DEFAULT_SUBNET};
use crate::name::check_node_name;
use crate::Error;

/// What a node name refers to, with its index.
#[derive(Clone, Copy)]
enum Node {
    Host(usize),
    Switch(usize),
}

/// Resolves links one by one, collecting what they give each node.
struct Wiring<'a> {
    nodes: HashMap<&'a str, Node>,
    switches: &'a [SwitchSpec],
    lab_subnet: Subnet,
    default_mtu: u32,
    links: Vec<Link>,
    /// Per host, the subnet of each of its links, in link order.
    host_subnets: Vec<Vec<Subnet>>,
    /// Per switch, its number of ports.
    switch_ports: Vec<usize>,
    /// Per switch, a switch it is joined to (union-find), to refuse loops.
    joined: Vec<usize>,
    /// Node pairs already joined by a link or WAN link.
    pairs: HashSet<(String, String)>,
}

/// Checks `file` and resolves it into a [`Topology`]; the error is one line.
pub(super) fn validate(file: TopologyFile) -> Result<Topology, TopologyError> {
    let subnet: Subnet = file
        .lab
        .subnet
        .as_deref()
        .unwrap_or(DEFAULT_SUBNET)
        .parse()?;
    let default_mtu = check_mtu(file.lab.mtu.unwrap_or(DEFAULT_MTU))?;
    if file.hosts.is_empty() {
        return Err(TopologyError::NoHost);
    }
    let switches = switch_specs(&file, subnet)?;
    let mut wiring = Wiring {
        nodes: index_nodes(&file)?,
        switches: &switches,
        lab_subnet: subnet,
        default_mtu,
        links: Vec::with_capacity(file.links.len()),
        host_subnets: vec![Vec::new(); file.hosts.len()],
        switch_ports: vec![0; switches.len()],
        joined: (0..switches.len()).collect(),
        pairs: HashSet::new(),
    };
    for (index, entry) in file.links.iter().enumerate() {
        let [a, b] = two_ends(&entry.ends, &format!("link {}", index + 1))?;
        wiring
            .wire(entry, [&a, &b])
            .map_err(|e| TopologyError::Link {
                a: a.clone(),
                b: b.clone(),
                error: Box::new(e),
            })?;
    }
    let wans = wire_wans(&file.wans, &mut wiring)?;
    if let Some(s) = wiring
        .switch_ports
        .iter()
        .position(|&n| n > MAX_BRIDGE_PORTS)
    {
        return Err(TopologyError::SwitchPorts(switches[s].name.clone()));
    }
    let hosts = file
        .hosts
        .iter()
        .zip(&wiring.host_subnets)
        .enumerate()
        .map(|(h, (entry, subnets))| address_host(h, entry, subnets))
        .collect::<Result<Vec<_>, TopologyError>>()?;
    check_unique_addresses(&hosts)?;
    let links = wiring.links;
    Ok(Topology {
        subnet,
        hosts,
        switches,
        links,
        wans,
        ipsec: None,
    })
}

/// The switches of `file`, each in its own subnet or the lab's (`subnet`).
fn switch_specs(file: &TopologyFile, subnet: Subnet) -> Result<Vec<SwitchSpec>, TopologyError> {
    file.switches
        .iter()
        .map(|s| {
            let own = s.subnet.as_deref().map(str::parse).transpose()?;
            Ok(SwitchSpec {
                name: s.name.clone(),
                subnet: own.unwrap_or(subnet),
            })
        })
        .collect()
}

/// Wires every WAN link of `entries` in order, refusing a name given twice.
fn wire_wans(entries: &[WanEntry], wiring: &mut Wiring<'_>) -> Result<Vec<Wan>, TopologyError> {
    let mut wans: Vec<Wan> = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let [a, b] = two_ends(&entry.ends, &format!("wan {}", index + 1))?;
        let name = wan::name_of(entry, [&a, &b])?;
        let wan = wiring
            .wire_wan(entry, index, name.clone(), [a, b])
            .map_err(|e| TopologyError::Wan {
                name: name.clone(),
                error: Box::new(e),
            })?;
        if wans.iter().any(|w| w.name == wan.name) {
            return Err(TopologyError::DuplicateWan(name));
        }
        wans.push(wan);
    }
    Ok(wans)
}

/// The two node names of an `ends` entry of `what` (`link 3`, `wan 1`).
fn two_ends(ends: &[String], what: &str) -> Result<[String; 2], TopologyError> {
    <[String; 2]>::try_from(ends.to_vec()).map_err(|_| TopologyError::Ends(what.into()))
}

/// Maps every node name to its kind, checking names and their uniqueness.
fn index_nodes(file: &TopologyFile) -> Result<HashMap<&str, Node>, TopologyError> {
    let hosts = file
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.as_str(), Node::Host(i)));
    let switches = file
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), Node::Switch(i)));
    let mut nodes = HashMap::new();
    for (name, kind) in hosts.chain(switches) {
        check_node_name(name).map_err(|e| match e {
            Error::Topology(message) => TopologyError::NodeName(message),
            other => TopologyError::NodeName(other.to_string()),
        })?;
        if nodes.insert(name, kind).is_some() {
            return Err(TopologyError::DuplicateNode(name.into()));
        }
    }
    for index in 0..file.wans.len() {
        let router = wan::router_name(index);
        if nodes.contains_key(router.as_str()) {
            return Err(TopologyError::RouterName {
                router,
                number: index + 1,
            });
        }
    }
    Ok(nodes)
}

impl Wiring<'_> {
    /// Resolves one link between nodes `a` and `b`.
    fn wire(&mut self, entry: &LinkEntry, [a, b]: [&str; 2]) -> Result<(), TopologyError> {
        let (na, nb, subnet) = self.join(a, b)?;
        let mtu = check_mtu(entry.mtu.unwrap_or(self.default_mtu))?;
        let rate_bps = entry.rate.as_deref().map(parse_rate).transpose()?;
        let ends = [self.end(a, na, b, subnet), self.end(b, nb, a, subnet)];
        self.links.push(Link {
            ends,
            mtu,
            rate_bps,
        });
        Ok(())
    }

    /// Resolves the `index`-th WAN link, named `name`, between nodes `a` and `b`: two links
    /// through its router, addressed as a direct link between `a` and `b` would be.
    fn wire_wan(
        &mut self,
        entry: &WanEntry,
        index: usize,
        name: String,
        [a, b]: [String; 2],
    ) -> Result<Wan, TopologyError> {
        let (na, nb, subnet) = self.join(&a, &b)?;
        let [a_to_b, b_to_a] = wan::params_of(entry)?;
        let mtu = check_mtu(entry.mtu.unwrap_or(self.default_mtu))?;
        let router = wan::router_name(index);
        let at_router = |peer: &str| LinkEnd {
            node: router.clone(),
            interface: peer.to_string(),
        };
        let (router_a, router_b) = (at_router(&a), at_router(&b));
        let ends = [
            [self.end(&a, na, &router, subnet), router_a.clone()],
            [router_b.clone(), self.end(&b, nb, &router, subnet)],
        ];
        self.links.extend(ends.map(|ends| Link {
            ends,
            mtu,
            rate_bps: None,
        }));
        Ok(Wan {
            name,
            router,
            ends: [a, b],
            interfaces: [router_a.interface, router_b.interface],
            a_to_b,
            b_to_a,
        })
    }

    /// Checks that nodes `a` and `b` may be joined (by a link or a WAN link) and records it;
    /// returns both nodes and the subnet of the segment they share.
    fn join(&mut self, a: &str, b: &str) -> Result<(Node, Node, Subnet), TopologyError> {
        let node = |name: &str| {
            self.nodes
                .get(name)
                .copied()
                .ok_or_else(|| TopologyError::UnknownNode(name.into()))
        };
        let (na, nb) = (node(a)?, node(b)?);
        if a == b {
            return Err(TopologyError::SameNode);
        }
        let pair = if a < b { (a, b) } else { (b, a) };
        if !self.pairs.insert((pair.0.to_string(), pair.1.to_string())) {
            return Err(TopologyError::AlreadyJoined(a.into(), b.into()));
        }
        let subnet = match (na, nb) {
            (Node::Switch(x), Node::Switch(y)) => {
                if self.switches[x].subnet != self.switches[y].subnet {
                    return Err(TopologyError::SwitchSubnets);
                }
                let (rx, ry) = (self.segment(x), self.segment(y));
                if rx == ry {
                    return Err(TopologyError::SwitchLoop);
                }
                self.joined[rx] = ry;
                self.switches[x].subnet
            }
            (Node::Switch(x), _) | (_, Node::Switch(x)) => self.switches[x].subnet,
            (Node::Host(_), Node::Host(_)) => self.lab_subnet,
        };
        Ok((na, nb, subnet))
    }

    /// The representative of the group of switches joined to switch `s`.
    fn segment(&mut self, mut s: usize) -> usize {
        while self.joined[s] != s {
            self.joined[s] = self.joined[self.joined[s]];
            s = self.joined[s];
        }
        s
    }

    /// The end of a link at node `me` (of `kind`) towards `peer`, in `subnet`.
    fn end(&mut self, me: &str, kind: Node, peer: &str, subnet: Subnet) -> LinkEnd {
        let interface = match kind {
            Node::Host(h) => {
                self.host_subnets[h].push(subnet);
                format!("eth{}", self.host_subnets[h].len() - 1)
            }
            Node::Switch(s) => {
                self.switch_ports[s] += 1;
                peer.to_string()
            }
        };
        LinkEnd {
            node: me.to_string(),
            interface,
        }
    }
}

/// Addresses host number `h` (0-based) whose links are in `subnets`.
fn address_host(
    h: usize,
    entry: &HostEntry,
    subnets: &[Subnet],
) -> Result<HostSpec, TopologyError> {
    let name = &entry.name;
    if subnets.is_empty() {
        return Err(TopologyError::Unlinked(name.clone()));
    }
    let mut seen = HashSet::new();
    let mut interfaces = Vec::with_capacity(subnets.len());
    for (i, &subnet) in subnets.iter().enumerate() {
        if !seen.insert(subnet) {
            return Err(TopologyError::TwoLinks {
                host: name.clone(),
                subnet,
            });
        }
        let address = match (&entry.address, i) {
            (Some(text), 0) => {
                let addr: Ipv4Addr = text.parse().map_err(|_| TopologyError::NotIpv4 {
                    host: name.clone(),
                    text: text.clone(),
                })?;
                if !subnet.is_host(addr) {
                    return Err(TopologyError::NotHostAddress {
                        host: name.clone(),
                        addr,
                        subnet,
                    });
                }
                addr
            }
            _ => subnet
                .host(h as u32 + 1)
                .ok_or_else(|| TopologyError::NoRoom {
                    subnet,
                    host: name.clone(),
                    number: h + 1,
                })?,
        };
        interfaces.push(Interface {
            name: format!("eth{i}"),
            address,
            prefix_len: subnet.prefix_len(),
        });
    }
    Ok(HostSpec {
        name: name.clone(),
        interfaces,
    })
}

/// Fails if two interfaces share an address.
fn check_unique_addresses(hosts: &[HostSpec]) -> Result<(), TopologyError> {
    let mut owners: HashMap<Ipv4Addr, &str> = HashMap::new();
    for host in hosts {
        for i in &host.interfaces {
            if let Some(other) = owners.insert(i.address, &host.name) {
                return Err(TopologyError::SharedAddress {
                    addr: i.address,
                    first: other.into(),
                    second: host.name.clone(),
                });
            }
        }
    }
    Ok(())
}

fn check_mtu(mtu: u32) -> Result<u32, TopologyError> {
    if (68..=65535).contains(&mtu) {
        Ok(mtu)
    } else {
        Err(TopologyError::Mtu(mtu))
    }
}
