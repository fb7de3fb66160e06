//! A topology placed under a lab name: the namespaces, interfaces and agents `up` creates and
//! `down` removes. This is what the state file records.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use serde::{Deserialize, Serialize};

use crate::agent::AgentProcess;
use crate::ipsec::IpsecLayout;
use crate::name::netns_name;
use crate::topology::{Interface, Link, Subnet, Topology, Wan};

/// Every node of a lab with its namespace, and the links between them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Layout {
    /// Hosts, in topology order.
    pub hosts: Vec<Host>,
    /// Switches, in topology order.
    pub switches: Vec<Switch>,
    /// Links, in topology order (a WAN link's two links to its router included).
    pub links: Vec<Link>,
    /// WAN links, in topology order.
    #[serde(default)]
    pub wans: Vec<WanLink>,
    /// IPsec between the hosts (`lab up --ipsec`), once set up.
    #[serde(default)]
    pub ipsec: Option<IpsecLayout>,
}

/// A host of a running lab: where it is, its addresses, its agent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Host {
    /// Its name, e.g. `h1`.
    pub name: String,
    /// Its network namespace, e.g. `fl-lab-h1`.
    pub netns: String,
    /// Its interfaces with their addresses, in link order.
    pub interfaces: Vec<Interface>,
    /// The TCP port its agent listens on (on every address).
    pub agent_port: u16,
    /// The agent process, once started.
    pub agent: Option<AgentProcess>,
    /// Its sshd (`lab up --sshd`), once started.
    #[serde(default)]
    pub sshd: Option<AgentProcess>,
    /// Its strongSwan charon (`lab up --ipsec`), once started.
    #[serde(default)]
    pub charon: Option<AgentProcess>,
}

impl Host {
    /// The address of the host's first interface.
    pub fn address(&self) -> Ipv4Addr {
        self.interfaces[0].address
    }

    /// Where the host's agent listens, seen from inside the lab.
    pub fn agent_addr(&self) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(self.address(), self.agent_port))
    }
}

/// A switch of a running lab: a bridge named like the switch in its own namespace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Switch {
    /// Its name, e.g. `sw1` (also the bridge's name).
    pub name: String,
    /// Its network namespace, e.g. `fl-lab-sw1`.
    pub netns: String,
    /// The subnet of its segment.
    pub subnet: Subnet,
}

/// A WAN link of a running lab: its router's namespace and the forwarder running there.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WanLink {
    /// The link as the topology declares it: name, router, ends, initial parameters.
    pub spec: Wan,
    /// The router's network namespace, e.g. `fl-lab-wan1`.
    pub netns: String,
    /// The forwarder process (`<fathom> lab wan-router`), once started.
    pub forwarder: Option<AgentProcess>,
}

impl Layout {
    /// Places `topology` under lab name `lab`, every agent on `agent_port`.
    pub fn new(lab: &str, topology: &Topology, agent_port: u16) -> Layout {
        let hosts = topology
            .hosts
            .iter()
            .map(|h| Host {
                name: h.name.clone(),
                netns: netns_name(lab, &h.name),
                interfaces: h.interfaces.clone(),
                agent_port,
                agent: None,
                sshd: None,
                charon: None,
            })
            .collect();
        let switches = topology
            .switches
            .iter()
            .map(|s| Switch {
                name: s.name.clone(),
                netns: netns_name(lab, &s.name),
                subnet: s.subnet,
            })
            .collect();
        let wans = topology
            .wans
            .iter()
            .map(|w| WanLink {
                spec: w.clone(),
                netns: netns_name(lab, &w.router),
                forwarder: None,
            })
            .collect();
        Layout {
            hosts,
            switches,
            links: topology.links.clone(),
            wans,
            ipsec: None,
        }
    }

    /// Every namespace of the lab: hosts first, then switches, then WAN routers.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        let hosts = self.hosts.iter().map(|h| h.netns.as_str());
        let switches = self.switches.iter().map(|s| s.netns.as_str());
        hosts
            .chain(switches)
            .chain(self.wans.iter().map(|w| w.netns.as_str()))
    }

    /// The hosts' agents that were started.
    pub fn agents(&self) -> impl Iterator<Item = &AgentProcess> {
        self.hosts.iter().filter_map(|h| h.agent.as_ref())
    }

    /// The hosts' sshd processes that were started.
    pub fn sshds(&self) -> impl Iterator<Item = &AgentProcess> {
        self.hosts.iter().filter_map(|h| h.sshd.as_ref())
    }

    /// The hosts' charons that were started.
    pub fn charons(&self) -> impl Iterator<Item = &AgentProcess> {
        self.hosts.iter().filter_map(|h| h.charon.as_ref())
    }

    /// The WAN links' forwarders that were started.
    pub fn forwarders(&self) -> impl Iterator<Item = &AgentProcess> {
        self.wans.iter().filter_map(|w| w.forwarder.as_ref())
    }

    /// The WAN link named `name`, or whose router node is `name`.
    pub fn wan(&self, name: &str) -> Option<&WanLink> {
        let by_name = self.wans.iter().find(|w| w.spec.name == name);
        by_name.or_else(|| self.wans.iter().find(|w| w.spec.router == name))
    }

    /// The namespace of the node (host, switch or WAN router) named `node`.
    pub fn netns_of(&self, node: &str) -> Option<&str> {
        let host = self
            .hosts
            .iter()
            .find(|h| h.name == node)
            .map(|h| h.netns.as_str());
        let switch = || {
            self.switches
                .iter()
                .find(|s| s.name == node)
                .map(|s| s.netns.as_str())
        };
        let router = || {
            self.wans
                .iter()
                .find(|w| w.spec.router == node)
                .map(|w| w.netns.as_str())
        };
        host.or_else(switch).or_else(router)
    }
}
