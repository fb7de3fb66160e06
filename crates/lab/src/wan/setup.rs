//! What `lab up` does for WAN links: prepare each router namespace and the path through it,
//! start the forwarders (detached, recorded like agents) and wait until they answer.
//!
//! The router must be a transparent box whose only forwarder is ours, so its namespace gets no
//! address, IPv4 forwarding off and IPv6 off (no link-local addresses, router solicitations or
//! forwarding of its own). Offloads (TSO, GSO, GRO, transmit checksum) go off on all four veth
//! ends of the emulated path, as [`fathom_wan::offload`] explains: a switch's port then
//! segments and checksums in software what its hosts hand it.

use std::io;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::control::{self, Request};
use crate::agent::AgentProcess;
use crate::error::{Error, Result};
use crate::lab::Lab;
use crate::layout::{Layout, WanLink};
use crate::netns;

/// Sysctls of a router namespace, relative to `/proc/sys/net/`, and their values; those of
/// IPv6 are skipped on a kernel without it.
const ROUTER_SYSCTLS: [(&str, &str); 4] = [
    ("ipv4/ip_forward", "0"),
    ("ipv6/conf/all/forwarding", "0"),
    ("ipv6/conf/default/disable_ipv6", "1"),
    ("ipv6/conf/all/disable_ipv6", "1"),
];

/// Prepares every WAN link of `layout` whose namespaces exist: sysctls in the router, offloads
/// off on both of the router's interfaces and on the interface of each node facing it.
pub fn prepare(layout: &Layout) -> Result<()> {
    for wan in &layout.wans {
        let interfaces = wan.spec.interfaces.to_vec();
        in_netns(&wan.netns, "preparing the router", move || {
            for (key, value) in ROUTER_SYSCTLS {
                write_sysctl(key, value)?;
            }
            disable_offloads(&interfaces)
        })?;
        for (netns, interface) in facing_ends(layout, wan) {
            in_netns(&netns, "turning offloads off", move || {
                disable_offloads(&[interface])
            })?;
        }
    }
    Ok(())
}

/// The namespace and interface of each node end facing `wan`'s router.
fn facing_ends(layout: &Layout, wan: &WanLink) -> Vec<(String, String)> {
    let router = &wan.spec.router;
    layout
        .links
        .iter()
        .filter(|l| l.ends.iter().any(|e| &e.node == router))
        .flat_map(|l| l.ends.iter().filter(|e| &e.node != router))
        .filter_map(|e| Some((layout.netns_of(&e.node)?.to_string(), e.interface.clone())))
        .collect()
}

fn in_netns<F>(netns: &str, what: &str, f: F) -> Result<()>
where
    F: FnOnce() -> io::Result<()> + Send + 'static,
{
    netns::run_in(netns, f).map_err(|source| Error::Io {
        context: format!("{what} in {netns}"),
        source,
    })
}

fn disable_offloads(interfaces: &[String]) -> io::Result<()> {
    interfaces
        .iter()
        .try_for_each(|i| fathom_wan::disable_offloads(i))
}

/// Writes a sysctl of the calling thread's network namespace (`/proc/sys/net` shows the
/// namespace of the thread that opens it).
fn write_sysctl(key: &str, value: &str) -> io::Result<()> {
    let path = Path::new("/proc/sys/net").join(key);
    match std::fs::write(&path, value) {
        Err(e) if e.kind() == io::ErrorKind::NotFound && key.starts_with("ipv6/") => Ok(()),
        other => other.map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

impl Lab {
    /// Starts the forwarder of every WAN link as `<exe> lab wan-router --name LAB --link LINK`
    /// in its router namespace, recording each in the state as soon as it runs.
    pub(crate) fn start_forwarders(&mut self, exe: &Path) -> Result<()> {
        for i in 0..self.state.layout.wans.len() {
            let wan = &self.state.layout.wans[i];
            let argv = [
                &exe.to_string_lossy(),
                "lab",
                "wan-router",
                "--name",
                &self.state.name,
                "--link",
                &wan.spec.name,
            ]
            .map(str::to_string)
            .to_vec();
            let log = self.dir.log_file(&wan.spec.router);
            let process = AgentProcess::spawn(&wan.netns, argv, &log)?;
            self.state.layout.wans[i].forwarder = Some(process);
            self.dir.save(&self.state)?;
        }
        Ok(())
    }

    /// Waits until every forwarder answers its control socket, failing at `deadline` or as
    /// soon as one exits.
    pub(crate) fn wait_forwarders(&self, deadline: Instant) -> Result<()> {
        for wan in &self.state.layout.wans {
            let process = wan
                .forwarder
                .as_ref()
                .expect("forwarders are started before waiting");
            let socket = self.dir.wan_socket(&wan.spec.name);
            let not_ready = |reason: String| Error::Forwarder {
                link: wan.spec.name.clone(),
                reason,
            };
            loop {
                let error = match control::ask(&socket, &Request::Get, Duration::from_secs(1)) {
                    Ok(_) => break,
                    Err(e) => e,
                };
                if !process.is_running() {
                    return Err(not_ready(format!("it exited; {}", process.log_summary())));
                }
                if Instant::now() >= deadline {
                    return Err(not_ready(format!(
                        "no answer on {} ({error}); {}",
                        socket.display(),
                        process.log_summary()
                    )));
                }
                sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }
}
