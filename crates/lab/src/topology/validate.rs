//! Checks a topology file and resolves interface names and addresses.
//!
//! Addressing: the n-th `[[host]]` gets host address n of each segment it joins (`h1` =
//! `10.77.0.1` in `10.77.0.0/16`); a host's optional `address` replaces that of its first
//! interface. A link to a switch is in the switch's subnet; a host-to-host link is in the lab's.

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;

use super::{parse_rate, HostSpec, Interface, Link, LinkEnd, Subnet, SwitchSpec, Topology};
use super::{HostEntry, LinkEntry, TopologyFile, DEFAULT_MTU, DEFAULT_SUBNET};
use crate::name::check_node_name;

/// A Linux bridge takes at most this many ports.
const MAX_BRIDGE_PORTS: usize = 1024;

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
}

/// Checks `file` and resolves it into a [`Topology`]; the error is one line.
pub(super) fn validate(file: TopologyFile) -> Result<Topology, String> {
    let subnet: Subnet = file
        .lab
        .subnet
        .as_deref()
        .unwrap_or(DEFAULT_SUBNET)
        .parse()?;
    let default_mtu = check_mtu(file.lab.mtu.unwrap_or(DEFAULT_MTU))?;
    if file.hosts.is_empty() {
        return Err("no [[host]]: a lab needs at least one host".to_string());
    }
    let switches = file
        .switches
        .iter()
        .map(|s| {
            let own = s.subnet.as_deref().map(str::parse).transpose()?;
            Ok(SwitchSpec {
                name: s.name.clone(),
                subnet: own.unwrap_or(subnet),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut wiring = Wiring {
        nodes: index_nodes(&file)?,
        switches: &switches,
        lab_subnet: subnet,
        default_mtu,
        links: Vec::with_capacity(file.links.len()),
        host_subnets: vec![Vec::new(); file.hosts.len()],
        switch_ports: vec![0; switches.len()],
    };
    let mut pairs = HashSet::new();
    for (index, entry) in file.links.iter().enumerate() {
        let [a, b] = <[String; 2]>::try_from(entry.ends.clone())
            .map_err(|_| format!("link {}: 'ends' needs exactly two node names", index + 1))?;
        if !pairs.insert(if a < b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        }) {
            return Err(format!("duplicate link {a}-{b}"));
        }
        wiring
            .wire(entry, [&a, &b])
            .map_err(|e| format!("link {a}-{b}: {e}"))?;
    }
    if let Some(s) = wiring
        .switch_ports
        .iter()
        .position(|&n| n > MAX_BRIDGE_PORTS)
    {
        return Err(format!(
            "switch {} has more than {MAX_BRIDGE_PORTS} links",
            switches[s].name
        ));
    }
    let hosts = file
        .hosts
        .iter()
        .zip(&wiring.host_subnets)
        .enumerate()
        .map(|(h, (entry, subnets))| address_host(h, entry, subnets))
        .collect::<Result<Vec<_>, String>>()?;
    check_unique_addresses(&hosts)?;
    let links = wiring.links;
    Ok(Topology {
        subnet,
        hosts,
        switches,
        links,
    })
}

/// Maps every node name to its kind, checking names and their uniqueness.
fn index_nodes(file: &TopologyFile) -> Result<HashMap<&str, Node>, String> {
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
        check_node_name(name).map_err(|e| e.to_string())?;
        if nodes.insert(name, kind).is_some() {
            return Err(format!("duplicate node name '{name}'"));
        }
    }
    Ok(nodes)
}

impl Wiring<'_> {
    /// Resolves one link between nodes `a` and `b`.
    fn wire(&mut self, entry: &LinkEntry, [a, b]: [&str; 2]) -> Result<(), String> {
        let node = |name: &str| {
            self.nodes
                .get(name)
                .copied()
                .ok_or_else(|| format!("unknown node '{name}'"))
        };
        let (na, nb) = (node(a)?, node(b)?);
        if a == b {
            return Err("a link needs two different nodes".to_string());
        }
        let subnet = match (na, nb) {
            (Node::Switch(x), Node::Switch(y))
                if self.switches[x].subnet != self.switches[y].subnet =>
            {
                return Err("linked switches must share a subnet".to_string());
            }
            (Node::Switch(x), _) | (_, Node::Switch(x)) => self.switches[x].subnet,
            (Node::Host(_), Node::Host(_)) => self.lab_subnet,
        };
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
fn address_host(h: usize, entry: &HostEntry, subnets: &[Subnet]) -> Result<HostSpec, String> {
    let name = &entry.name;
    if subnets.is_empty() {
        return Err(format!("host {name} has no [[link]]"));
    }
    let mut seen = HashSet::new();
    let mut interfaces = Vec::with_capacity(subnets.len());
    for (i, &subnet) in subnets.iter().enumerate() {
        if !seen.insert(subnet) {
            return Err(format!("host {name} has two links into subnet {subnet}"));
        }
        let address = match (&entry.address, i) {
            (Some(text), 0) => {
                let addr: Ipv4Addr = text
                    .parse()
                    .map_err(|_| format!("host {name}: address '{text}' is not an IPv4 address"))?;
                if !subnet.is_host(addr) {
                    return Err(format!(
                        "host {name}: address {addr} is not a host address of {subnet}"
                    ));
                }
                addr
            }
            _ => subnet.host(h as u32 + 1).ok_or_else(|| {
                format!(
                    "subnet {subnet} has no room for host {name} (host number {})",
                    h + 1
                )
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
fn check_unique_addresses(hosts: &[HostSpec]) -> Result<(), String> {
    let mut owners: HashMap<Ipv4Addr, &str> = HashMap::new();
    for host in hosts {
        for i in &host.interfaces {
            if let Some(other) = owners.insert(i.address, &host.name) {
                return Err(format!(
                    "address {} is given to both {other} and {}",
                    i.address, host.name
                ));
            }
        }
    }
    Ok(())
}

fn check_mtu(mtu: u32) -> Result<u32, String> {
    if (68..=65535).contains(&mtu) {
        Ok(mtu)
    } else {
        Err(format!("mtu {mtu}: must be 68 to 65535"))
    }
}
