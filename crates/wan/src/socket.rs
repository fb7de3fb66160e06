//! AF_PACKET raw sockets bound to one interface, and the send side: batches of frames written with
//! `sendmmsg`. A sender is bound with protocol 0, so the kernel hands it no frames at all, and
//! bypasses the qdisc layer (`PACKET_QDISC_BYPASS`), as the emulator has already shaped the frames.
//! The receive side is [`crate::ring`].

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Send buffer asked for.
const SNDBUF_BYTES: libc::c_int = 8 << 20;

/// An AF_PACKET raw socket bound to one interface.
pub struct PacketSocket {
    fd: OwnedFd,
}

/// Preallocated message headers and buffer descriptors for one `sendmmsg` call.
pub struct Batch {
    hdrs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
}

// SAFETY: the raw pointers in the headers point into the batch's own heap allocations (which
// move with it) or at frames the owner sets before each call; nothing is shared between threads.
unsafe impl Send for Batch {}

impl Batch {
    /// Room for `size` frames per call.
    pub fn new(size: usize) -> Self {
        // SAFETY: mmsghdr and iovec are plain C structs for which all-zero bytes are valid.
        let mut batch = Batch {
            hdrs: vec![unsafe { zeroed() }; size],
            iovs: vec![unsafe { zeroed() }; size],
        };
        for (hdr, iov) in batch.hdrs.iter_mut().zip(batch.iovs.iter_mut()) {
            // The iovec Vec is never resized, so this pointer stays valid as long as the batch.
            hdr.msg_hdr.msg_iov = iov;
            hdr.msg_hdr.msg_iovlen = 1;
        }
        batch
    }

    /// Number of frames a call can carry.
    pub fn size(&self) -> usize {
        self.hdrs.len()
    }

    /// Points entry `i` at the `len` bytes of a frame to send.
    pub fn set(&mut self, i: usize, frame: *const u8, len: usize) {
        self.iovs[i] = libc::iovec {
            iov_base: frame.cast_mut().cast(),
            iov_len: len,
        };
    }
}

impl PacketSocket {
    /// A socket that sends frames out of `ifname` and receives nothing.
    pub fn sender(ifname: &str) -> io::Result<Self> {
        let socket = Self::open()?;
        socket.set_option(libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1)?;
        if socket
            .set_option(libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, SNDBUF_BYTES)
            .is_err()
        {
            socket.set_option(libc::SOL_SOCKET, libc::SO_SNDBUF, SNDBUF_BYTES)?;
        }
        socket.bind(ifname, 0)?;
        Ok(socket)
    }

    /// The MTU of `ifname` (in the calling thread's network namespace).
    pub fn mtu(&self, ifname: &str) -> io::Result<usize> {
        let mut req = ifreq(ifname)?;
        // SAFETY: SIOCGIFMTU reads the name from and writes the MTU into the ifreq we own.
        cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCGIFMTU, &mut req) })?;
        // SAFETY: the kernel has just written the MTU member of the union.
        Ok(unsafe { req.ifr_ifru.ifru_mtu } as usize)
    }

    /// Sends entries `start..end` of `batch`; returns how many were sent (at least one, or an
    /// error about entry `start`).
    pub fn send(&self, batch: &mut Batch, start: usize, end: usize) -> io::Result<usize> {
        assert!(start < end && end <= batch.size());
        loop {
            // SAFETY: entries start..end are in bounds and point at buffers holding their frames.
            let sent = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    batch.hdrs.as_mut_ptr().add(start),
                    (end - start) as libc::c_uint,
                    0,
                )
            };
            match cvt(sent) {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                result => return result.map(|n| n as usize),
            }
        }
    }

    /// Waits until a frame can be read or `timeout_ns` has passed; returns whether a frame can
    /// be read.
    pub fn wait_readable(&self, timeout_ns: u64) -> io::Result<bool> {
        let mut poll = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
        match cvt(unsafe { libc::ppoll(&mut poll, 1, &timeout, std::ptr::null()) }) {
            Ok(ready) => Ok(ready > 0),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Frames the kernel dropped for want of receive room since the last call.
    pub fn take_drops(&self) -> io::Result<u64> {
        // SAFETY: tpacket_stats is a plain C struct; all-zero bytes are valid.
        let mut stats: libc::tpacket_stats = unsafe { zeroed() };
        let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: PACKET_STATISTICS writes at most `len` bytes into `stats`.
        cvt(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut stats as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        })?;
        Ok(stats.tp_drops as u64)
    }

    /// An unbound AF_PACKET raw socket.
    pub(crate) fn open() -> io::Result<Self> {
        // Protocol 0 until bound, so no frame from another interface is queued meanwhile.
        // SAFETY: plain socket(2) call; the result is checked before use.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
        Ok(PacketSocket {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Binds to `ifname` for frames of `protocol` (0: none); returns the interface index.
    pub(crate) fn bind(&self, ifname: &str, protocol: u16) -> io::Result<u32> {
        let ifindex = ifindex(ifname)?;
        // SAFETY: sockaddr_ll is a plain C struct; all-zero bytes are valid.
        let mut addr: libc::sockaddr_ll = unsafe { zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol.to_be();
        addr.sll_ifindex = ifindex as libc::c_int;
        let len = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: `addr` is a valid sockaddr_ll of `len` bytes.
        cvt(unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                len,
            )
        })?;
        Ok(ifindex)
    }

    /// Sets an integer socket option.
    pub(crate) fn set_option(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        value: libc::c_int,
    ) -> io::Result<()> {
        self.set_struct(level, name, &value)
    }

    /// Sets a socket option whose value is a C struct.
    pub(crate) fn set_struct<T>(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        value: &T,
    ) -> io::Result<()> {
        let len = size_of::<T>() as libc::socklen_t;
        // SAFETY: `value` points at `len` readable bytes for the duration of the call.
        cvt(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (value as *const T).cast(),
                len,
            )
        })
        .map(drop)
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The index of `ifname` in the calling thread's network namespace.
fn ifindex(ifname: &str) -> io::Result<u32> {
    let name = CString::new(ifname)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
    // SAFETY: `name` is a valid NUL-terminated string.
    match unsafe { libc::if_nametoindex(name.as_ptr()) } {
        0 => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface '{ifname}' in this network namespace"),
        )),
        index => Ok(index),
    }
}

/// An ifreq naming `ifname`, for interface ioctls.
pub(crate) fn ifreq(ifname: &str) -> io::Result<libc::ifreq> {
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ || ifname.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{ifname}' is not an interface name"),
        ));
    }
    // SAFETY: ifreq is a plain C struct; all-zero bytes are valid.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(ifname.bytes()) {
        *dst = src as libc::c_char;
    }
    Ok(req)
}

/// Turns a -1 return into the errno error.
pub(crate) fn cvt(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}
