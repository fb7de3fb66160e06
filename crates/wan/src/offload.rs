//! Turning off the NIC offloads that would hand the emulator frames it cannot forward as they are.
//!
//! With segmentation offload (TSO/GSO) a sender's frames are up to 64 KB, larger than the MTU, and
//! are dropped as oversize; with GRO the router end merges frames into such giants; with transmit
//! checksum offload the frames carry unfinished checksums, which the receiver rejects after the
//! emulator copies them. The lab turns all four off on **both ends of each veth pair** that meets
//! the router — the hosts' ends (which make the frames) and the router's ends (which receive them).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::socket::{cvt, ifreq};

/// Legacy ethtool commands (linux/ethtool.h) that set one offload each.
const ETHTOOL_STXCSUM: u32 = 0x17;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_SGRO: u32 = 0x2c;

/// `struct ethtool_value` from linux/ethtool.h.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// Turns off TSO, GSO, GRO and transmit checksum offload on `ifname`, in the calling thread's
/// network namespace (the equivalent of `ethtool -K IF tso off gso off gro off tx off`).
pub fn disable_offloads(ifname: &str) -> io::Result<()> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    for cmd in [ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO, ETHTOOL_STXCSUM] {
        let mut value = EthtoolValue { cmd, data: 0 };
        let mut req = ifreq(ifname)?;
        req.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
        // SAFETY: SIOCETHTOOL reads the command from `value`, which outlives the call.
        cvt(unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCETHTOOL, &mut req) }).map_err(
            |e| io::Error::new(e.kind(), format!("turning off offloads on {ifname}: {e}")),
        )?;
    }
    Ok(())
}
