//! What a lab's IPsec is: where ESP runs, what `lab up` is asked for, and the encrypted links
//! its state records (made by `IpsecLayout::new` in `ipsec.rs`, from the lab's layout).

use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

use super::suite::{Suite, UnknownName};

/// Where ESP runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Datapath {
    /// In the kernel (xfrm), which charon programs through kernel-netlink.
    Kernel,
    /// In charon, over a TUN device (kernel-libipsec).
    Userspace,
}

impl Datapath {
    /// Its name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Datapath::Kernel => "kernel",
            Datapath::Userspace => "userspace",
        }
    }

    /// The data path called `name`.
    pub fn parse(name: &str) -> std::result::Result<Datapath, UnknownName> {
        match name {
            "kernel" => Ok(Datapath::Kernel),
            "userspace" => Ok(Datapath::Userspace),
            _ => Err(UnknownName::new(name, ["kernel", "userspace"])),
        }
    }
}

/// What `lab up` is asked for: the suite and the data path (already chosen, see
/// [`choose`](super::choose)).
#[derive(Clone, Debug)]
pub struct IpsecOptions {
    /// The cipher suite.
    pub suite: Suite,
    /// Where ESP runs.
    pub datapath: Datapath,
    /// The pairs of hosts to join (a topology's `ipsec` keys); none: every pair.
    pub pairs: Option<Vec<[String; 2]>>,
    /// For tests: give this host a pre-shared key of its own, so that its links fail.
    pub wrong_psk_host: Option<String>,
}

/// The IPsec part of a lab's layout, as its state records it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IpsecLayout {
    /// The cipher suite.
    pub suite: Suite,
    /// Where ESP runs.
    pub datapath: Datapath,
    /// One connection per pair of hosts joined.
    pub links: Vec<IpsecLink>,
}

/// An encrypted link between two hosts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IpsecLink {
    /// As the user sees it: `h1-h2`.
    pub name: String,
    /// The connection's (and its CHILD_SA's) name in swanctl.conf: `l1-2` (host indexes).
    pub conn: String,
    /// The two hosts; the first initiates.
    pub ends: [String; 2],
    /// Their addresses (each host's first).
    pub addrs: [Ipv4Addr; 2],
}

impl IpsecLink {
    /// Which end `host` is (0 or 1), if any.
    pub fn end_of(&self, host: &str) -> Option<usize> {
        self.ends.iter().position(|e| e == host)
    }
}
