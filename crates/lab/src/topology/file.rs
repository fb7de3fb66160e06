//! The topology file as written: TOML sections read into plain structs, before any checking.
//!
//! ```toml
//! [lab]
//! subnet = "10.77.0.0/16"   # default for every segment
//! mtu = 1500                # default for every link
//!
//! [[switch]]
//! name = "sw1"
//! subnet = "10.77.0.0/16"   # optional: this segment's subnet
//!
//! [[host]]
//! name = "h1"
//! address = "10.77.0.10"    # optional: the address of the host's first interface
//!
//! [[link]]
//! ends = ["h1", "sw1"]
//! mtu = 9000                # optional
//! rate = "1G"               # optional: tbf on both ends
//! ipsec = "aes-256-gcm"     # optional: IPsec between the hosts on its two sides
//!
//! [[wan]]
//! name = "h1-h2"            # optional (default "<a>-<b>"): what `lab wan set` calls it
//! ends = ["sw1", "sw2"]     # two hosts, a host and a switch, or two switches
//! params = "delay=25ms"     # optional: both directions
//! a_to_b = "rate=100M"      # optional: on top of `params`, from ends[0] to ends[1]
//! b_to_a = "loss=0.1%"      # optional: on top of `params`, from ends[1] to ends[0]
//! mtu = 1500                # optional
//! ipsec = "aes-256-gcm"     # optional: IPsec between the hosts on its two sides (a switch
//!                           # end stands for every host linked to it); one suite per lab
//! ```

use serde::Deserialize;

/// A whole topology file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// Lab-wide defaults.
    #[serde(default)]
    pub lab: LabSection,
    /// `[[host]]` entries, in file order (the order numbers the hosts' addresses).
    #[serde(default, rename = "host")]
    pub hosts: Vec<HostEntry>,
    /// `[[switch]]` entries.
    #[serde(default, rename = "switch")]
    pub switches: Vec<SwitchEntry>,
    /// `[[link]]` entries, in file order (the order numbers each host's interfaces).
    #[serde(default, rename = "link")]
    pub links: Vec<LinkEntry>,
    /// `[[wan]]` entries, in file order; a host's interfaces for them come after its links'.
    #[serde(default, rename = "wan")]
    pub wans: Vec<WanEntry>,
}

/// The `[lab]` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabSection {
    /// Default subnet, e.g. `"10.77.0.0/16"`.
    pub subnet: Option<String>,
    /// Default MTU of every link.
    pub mtu: Option<u32>,
}

/// A `[[host]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostEntry {
    /// The host's name, e.g. `h1`.
    pub name: String,
    /// An explicit IPv4 address for the host's first interface.
    pub address: Option<String>,
}

/// A `[[switch]]` entry: a Linux bridge in its own namespace.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchEntry {
    /// The switch's name, e.g. `sw1`.
    pub name: String,
    /// The subnet of the segment this switch makes (default: the lab's).
    pub subnet: Option<String>,
}

/// A `[[link]]` entry: a veth pair between two nodes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEntry {
    /// The two nodes joined.
    pub ends: Vec<String>,
    /// MTU of both ends (default: the lab's).
    pub mtu: Option<u32>,
    /// Rate limit of both ends' egress, e.g. `"1G"`.
    pub rate: Option<String>,
    /// IPsec between the hosts on its two sides, with this suite (see `ipsec.rs`).
    #[serde(default)]
    pub ipsec: Option<String>,
}

/// A `[[wan]]` entry: the WAN emulator between two nodes, in a router namespace of its own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WanEntry {
    /// What `lab wan set` and `lab status` call it (default: `"<a>-<b>"`).
    pub name: Option<String>,
    /// The two nodes joined: hosts or switches.
    pub ends: Vec<String>,
    /// Emulator parameters for both directions, e.g. `"delay=25ms,rate=1G"`.
    pub params: Option<String>,
    /// Parameters changed, on top of `params`, for frames from `ends[0]` to `ends[1]`.
    pub a_to_b: Option<String>,
    /// Parameters changed, on top of `params`, for frames from `ends[1]` to `ends[0]`.
    pub b_to_a: Option<String>,
    /// MTU of the emulated path (default: the lab's).
    pub mtu: Option<u32>,
    /// IPsec between the hosts on its two sides, with this suite (see `ipsec.rs`).
    #[serde(default)]
    pub ipsec: Option<String>,
}
