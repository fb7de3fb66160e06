//! Entering a named network namespace (one made by `ip netns add NAME`) from the calling thread.
//!
//! A network namespace belongs to each thread, so a test or the lab can run the forwarder in
//! process: enter the router's namespace on a thread of its own and start the forwarder there.
//! Threads spawned afterwards from that thread start in the same namespace.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Moves the calling thread into the network namespace `/run/netns/NAME`.
pub fn enter(name: &str) -> io::Result<()> {
    if name.is_empty() || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}' is not a namespace name"),
        ));
    }
    let file = File::open(format!("/run/netns/{name}"))
        .map_err(|e| io::Error::new(e.kind(), format!("network namespace '{name}': {e}")))?;
    // SAFETY: `file` is an open namespace file; CLONE_NEWNET makes setns check that it is a
    // network namespace, and the call affects only the calling thread.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("entering network namespace '{name}': {e}"),
        ));
    }
    Ok(())
}
