//! Named network namespaces (`/run/netns/NAME`, as `ip netns` keeps them): listing them, finding
//! the processes inside, and running code inside one.
//!
//! A socket keeps the namespace it was created in, so a controller in the root namespace reaches
//! a lab host by creating the socket on a short-lived thread that entered the host's namespace:
//! [`connect_in`] does exactly that.

use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

/// Where `ip netns` keeps its namespaces.
const NETNS_DIR: &str = "/run/netns";

/// The file that holds namespace `name` alive.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

/// Whether the named namespace exists.
pub fn exists(name: &str) -> bool {
    path(name).exists()
}

/// The names of every named namespace, sorted; empty when there are none.
pub fn list() -> io::Result<Vec<String>> {
    let entries = match std::fs::read_dir(NETNS_DIR) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for entry in entries {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Opens the namespace for [`enter`].
pub fn open(name: &str) -> io::Result<File> {
    let path = path(name);
    File::open(&path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("network namespace {}: {e}", path.display()),
        )
    })
}

/// Moves the calling thread into the namespace `ns` (from [`open`]). Only network state
/// changes; call it on a thread of its own or in a child before `exec`. Async-signal-safe.
pub fn enter(ns: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: setns only reads its arguments; a bad descriptor or type is reported as an error.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Runs `f` on a new thread inside namespace `netns` and returns its result. Sockets `f`
/// creates stay in that namespace when used from any thread afterwards.
pub fn run_in<T, F>(netns: &str, f: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let ns = open(netns)?;
    std::thread::Builder::new()
        .name(format!("netns-{netns}"))
        .spawn(move || {
            enter(&ns)?;
            f()
        })?
        .join()
        .map_err(|_| io::Error::other("thread inside network namespace panicked"))?
}

/// Opens a TCP connection to `addr` from inside namespace `netns`, waiting at most `timeout`.
pub fn connect_in(netns: &str, addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    run_in(netns, move || TcpStream::connect_timeout(&addr, timeout))
}

/// The processes whose network namespace is `netns`, in pid order.
pub fn pids_in(netns: &str) -> Vec<u32> {
    let Ok(target) = std::fs::metadata(path(netns)) else {
        return Vec::new();
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = procs
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid: &u32| {
            std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| m.dev() == target.dev() && m.ino() == target.ino())
        })
        .collect();
    pids.sort_unstable();
    pids
}
