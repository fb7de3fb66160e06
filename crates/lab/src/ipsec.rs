//! IPsec between lab hosts with strongSwan: `lab up --ipsec SUITE` runs a charon in every host
//! (inside its namespace, with its own config, socket, log and PID file under the lab's state
//! directory), gives each pair of hosts an IKEv2 connection with a pre-shared key made for the
//! lab (with a topology's `ipsec` keys: each pair across a link that carries one, and a charon
//! only in those pairs' hosts), and waits until every CHILD_SA is installed at both ends. The keys come from a real
//! IKEv2 negotiation. ESP runs in the kernel (kernel-netlink) where the kernel can ([`probe`]),
//! else in charon's user space over a TUN device (kernel-libipsec); `--ipsec-datapath` forces
//! either.
//!
//! - `suite.rs`: the suites and their proposals; `probe.rs`: the kernel's ESP check;
//! - `config.rs`: strongswan.conf and swanctl.conf; `charon.rs`: starting, loading, initiating;
//! - `sas.rs`: the SAs and their counters (`swanctl --list-sas --raw`); `up.rs`: the lab's step.

mod charon;
mod config;
mod layout;
mod probe;
mod sas;
mod suite;
mod up;

use std::path::Path;

pub use layout::{Datapath, IpsecLayout, IpsecLink, IpsecOptions};
pub use probe::probe;
pub use sas::{charon_cpu_s, link_status, IpsecLinkStatus, IpsecStatus};
pub use suite::{Suite, UnknownName};

use crate::error::{Error, Result};
use crate::layout::Layout;

/// The most hosts a lab with `--ipsec` may have: every pair of hosts gets a connection.
pub const MAX_IPSEC_HOSTS: usize = 16;

impl IpsecLayout {
    /// A connection for every pair of `layout`'s hosts that `opts` joins; [`Error::Topology`]
    /// beyond [`MAX_IPSEC_HOSTS`] hosts or for a wrong-key host the lab does not have.
    pub fn new(layout: &Layout, opts: &IpsecOptions) -> Result<IpsecLayout> {
        let hosts = &layout.hosts;
        if hosts.len() > MAX_IPSEC_HOSTS {
            return Err(Error::Topology(format!(
                "--ipsec: at most {MAX_IPSEC_HOSTS} hosts (one connection per pair), not {}",
                hosts.len()
            )));
        }
        if let Some(h) = opts
            .wrong_psk_host
            .as_ref()
            .filter(|h| !hosts.iter().any(|x| &&x.name == h))
        {
            return Err(Error::Topology(format!(
                "--ipsec-wrong-psk: the lab has no host '{h}'"
            )));
        }
        let joined = |a: &str, b: &str| {
            opts.pairs
                .as_ref()
                .is_none_or(|p| p.iter().any(|[x, y]| [x, y] == [a, b] || [x, y] == [b, a]))
        };
        let mut links = Vec::new();
        for (i, a) in hosts.iter().enumerate() {
            for (j, b) in hosts.iter().enumerate().skip(i + 1) {
                if !joined(&a.name, &b.name) {
                    continue;
                }
                links.push(IpsecLink {
                    name: format!("{}-{}", a.name, b.name),
                    conn: format!("l{}-{}", i + 1, j + 1),
                    ends: [a.name.clone(), b.name.clone()],
                    addrs: [a.address(), b.address()],
                });
            }
        }
        Ok(IpsecLayout {
            suite: opts.suite,
            datapath: opts.datapath,
            links,
        })
    }
}

/// The strongSwan files `--ipsec` needs, each with the Debian package that has it.
const NEEDED: [(&str, &str); 5] = [
    ("/usr/lib/ipsec/charon", "strongswan-charon"),
    ("/usr/sbin/swanctl", "strongswan-swanctl"),
    (
        "/usr/lib/ipsec/plugins/libstrongswan-kernel-libipsec.so",
        "libcharon-extra-plugins",
    ),
    (
        "/usr/lib/ipsec/plugins/libstrongswan-openssl.so",
        "libstrongswan-standard-plugins",
    ),
    (
        "/usr/lib/ipsec/plugins/libstrongswan-kdf.so",
        "libstrongswan",
    ),
];

/// The packages `--ipsec` needs that are missing, one line naming them and the install
/// command; `Ok` when all are there.
pub fn check_packages() -> Result<()> {
    let mut missing: Vec<&str> = NEEDED
        .iter()
        .filter(|(file, _)| !Path::new(file).exists())
        .map(|&(_, package)| package)
        .collect();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Ipsec(format!(
        "--ipsec needs strongSwan, which is missing here ({}): run `apt-get install -y \
         strongswan-charon strongswan-swanctl libcharon-extra-plugins \
         libstrongswan-extra-plugins libstrongswan-standard-plugins`",
        missing.join(", ")
    )))
}

/// Chooses where ESP runs: `forced` if given (the kernel only if it passes the probe, user
/// space only with /dev/net/tun), else the kernel where it can and user space otherwise.
/// Probes in a throwaway namespace `probe_ns`.
pub fn choose(suite: Suite, forced: Option<Datapath>, probe_ns: &str) -> Result<Datapath> {
    let tun = || {
        if Path::new("/dev/net/tun").exists() {
            Ok(Datapath::Userspace)
        } else {
            Err(Error::Ipsec(format!(
                "--ipsec {suite}: user-space ESP needs /dev/net/tun, which this machine lacks"
            )))
        }
    };
    match forced {
        Some(Datapath::Kernel) => probe(suite, probe_ns).map(|()| Datapath::Kernel),
        Some(Datapath::Userspace) => tun(),
        None => match probe(suite, probe_ns) {
            Ok(()) => Ok(Datapath::Kernel),
            Err(_) => tun(),
        },
    }
}
