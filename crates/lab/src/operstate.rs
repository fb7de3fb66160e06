//! Waits until every interface of a lab is operationally up.
//!
//! The kernel turns a new link's carrier into a working queue from its link-watch work, which it
//! may delay by up to a second when many links change at once; until then packets are dropped,
//! so the first ARP of a fresh lab can be lost. `IFF_RUNNING` is set by that same work, so
//! once every interface reports it, the lab forwards.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::netns;

/// Waits until every veth end and bridge of `layout` is running, or fails at `deadline`.
pub fn wait_running(layout: &Layout, deadline: Instant) -> Result<()> {
    let mut pending: Vec<(String, Vec<String>)> = layout
        .namespaces()
        .map(|ns| (ns.to_string(), interfaces_in(layout, ns)))
        .collect();
    loop {
        let mut still = Vec::new();
        for (ns, names) in pending {
            let down =
                netns::run_in(&ns, move || not_running(names)).map_err(|source| Error::Io {
                    context: format!("reading link states in {ns}"),
                    source,
                })?;
            if !down.is_empty() {
                still.push((ns, down));
            }
        }
        pending = still;
        let Some((ns, names)) = pending.first() else {
            return Ok(());
        };
        if Instant::now() >= deadline {
            return Err(Error::LinkNotUp {
                netns: ns.clone(),
                interfaces: names.join(", "),
            });
        }
        sleep(Duration::from_millis(10));
    }
}

/// The interfaces in namespace `netns`: its link ends, and its bridge on a switch.
fn interfaces_in(layout: &Layout, netns: &str) -> Vec<String> {
    let ends = layout.links.iter().flat_map(|l| &l.ends);
    let mut names: Vec<String> = ends
        .filter(|e| layout.netns_of(&e.node) == Some(netns))
        .map(|e| e.interface.clone())
        .collect();
    names.extend(
        layout
            .switches
            .iter()
            .filter(|s| s.netns == netns)
            .map(|s| s.name.clone()),
    );
    names
}

/// Those of `names` (in the calling thread's namespace) that are not running.
fn not_running(names: Vec<String>) -> io::Result<Vec<String>> {
    // SAFETY: socket takes no pointers; a negative result is checked before the fd is owned.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor that nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut down = Vec::new();
    for name in names {
        // SAFETY: ifreq is plain data for which all zeroes is valid.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        // Names are at most 15 bytes (checked by topology validation), leaving the NUL.
        for (dst, src) in req
            .ifr_name
            .iter_mut()
            .zip(name.bytes().take(libc::IFNAMSIZ - 1))
        {
            *dst = src as libc::c_char;
        }
        // SAFETY: SIOCGIFFLAGS reads ifr_name and writes ifru_flags of the ifreq we own.
        if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: after SIOCGIFFLAGS the union holds the flags.
        let flags = i32::from(unsafe { req.ifr_ifru.ifru_flags });
        if flags & libc::IFF_RUNNING == 0 {
            down.push(name);
        }
    }
    Ok(down)
}
