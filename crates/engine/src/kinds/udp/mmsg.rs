//! Batched datagram system calls: `sendmmsg` of consecutive fixed-size slots (with `--gso`, each
//! message a run of slots the kernel cuts into datagrams, UDP_SEGMENT) and `recvmmsg` into fixed
//! slots with each message's kernel receive time, the socket's overflow count and (UDP_GRO) the
//! size of the datagrams a coalesced message holds.
//!
//! The message arrays are allocated once per flow; the pointers in them are set again before
//! every call, to buffers the caller lends for that call only.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// Room for one message's control data: a timespec (SO_TIMESTAMPNS), a u32 (SO_RXQ_OVFL) and an
/// int (UDP_GRO), each behind its cmsg header.
const CONTROL: usize = 128;

/// The message array of one flow.
pub struct Batch {
    msgs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    control: Vec<[u64; CONTROL / 8]>,
}

// SAFETY: the raw pointers inside are rewritten before every call and point only into buffers
// borrowed for that call; between calls they are never read.
unsafe impl Send for Batch {}

/// One message read by [`Batch::recv`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Received {
    /// Its length.
    pub len: usize,
    /// When the kernel received it (CLOCK_REALTIME ns), if stamped.
    pub at_ns: Option<u64>,
    /// The socket's cumulative receive-buffer drop count (SO_RXQ_OVFL), if reported.
    pub dropped: Option<u32>,
    /// With UDP_GRO: the size of the datagrams the kernel coalesced into this message.
    pub segment: Option<usize>,
}

fn empty_iov() -> libc::iovec {
    libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }
}

impl Batch {
    /// A batch of up to `n` messages.
    pub fn new(n: usize) -> Batch {
        // SAFETY: mmsghdr is plain data; all-zero is a valid empty message.
        let zero: libc::mmsghdr = unsafe { std::mem::zeroed() };
        Batch {
            msgs: vec![zero; n],
            iovs: vec![empty_iov(); n],
            control: vec![[0; CONTROL / 8]; n],
        }
    }

    /// Sends `buf` (consecutive datagrams) as messages of up to `per_message` bytes each: one
    /// datagram each, or with UDP_SEGMENT set on the socket a run the kernel cuts into
    /// datagrams. Returns how many messages went (0 when the socket is full).
    pub fn send(&mut self, fd: RawFd, buf: &[u8], per_message: usize) -> io::Result<usize> {
        let mut n = 0;
        for ((m, iov), chunk) in self
            .msgs
            .iter_mut()
            .zip(&mut self.iovs)
            .zip(buf.chunks(per_message.max(1)))
        {
            *iov = libc::iovec {
                iov_base: chunk.as_ptr() as *mut _,
                iov_len: chunk.len(),
            };
            // The rest of the header stays as `new` zeroed it: no name, no control data.
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
            n += 1;
        }
        // SAFETY: msgs[..n] point at iovecs that point into `buf`, alive for this call.
        let r = unsafe { libc::sendmmsg(fd, self.msgs.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT) };
        settle(r)
    }

    /// Reads up to `out.len()` messages into consecutive `slot`-byte slots of `buf`.
    pub fn recv(
        &mut self,
        fd: RawFd,
        buf: &mut [u8],
        slot: usize,
        out: &mut [Received],
    ) -> io::Result<usize> {
        let n = out.len().min(self.msgs.len()).min(buf.len() / slot.max(1));
        for (i, chunk) in buf.chunks_mut(slot).take(n).enumerate() {
            self.iovs[i] = libc::iovec {
                iov_base: chunk.as_mut_ptr() as *mut _,
                iov_len: chunk.len(),
            };
            // No name, as `new` left it; the kernel rewrites only the lengths and flags.
            let h = &mut self.msgs[i].msg_hdr;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.control[i].as_mut_ptr() as *mut _;
            h.msg_controllen = CONTROL as _;
        }
        // SAFETY: msgs[..n] point at iovecs into `buf` and at control buffers of this batch.
        let r = unsafe {
            libc::recvmmsg(
                fd,
                self.msgs.as_mut_ptr(),
                n as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        let got = settle(r)?;
        for (i, o) in out.iter_mut().take(got).enumerate() {
            *o = self.read_control(i);
        }
        Ok(got)
    }

    /// The length, receive stamp, overflow count and GRO segment size of message `i` after a `recvmmsg`.
    fn read_control(&self, i: usize) -> Received {
        let m = &self.msgs[i];
        let mut r = Received {
            len: m.msg_len as usize,
            ..Received::default()
        };
        // SAFETY: the kernel filled msg_control up to msg_controllen with well-formed cmsgs;
        // the CMSG macros stay within it.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&m.msg_hdr);
            while !c.is_null() {
                let data = libc::CMSG_DATA(c);
                match ((*c).cmsg_level, (*c).cmsg_type) {
                    (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS) => {
                        let ts = std::ptr::read_unaligned(data as *const libc::timespec);
                        r.at_ns = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                    }
                    (libc::SOL_SOCKET, libc::SO_RXQ_OVFL) => {
                        r.dropped = Some(std::ptr::read_unaligned(data as *const u32));
                    }
                    (libc::SOL_UDP, libc::UDP_GRO) => {
                        let size = std::ptr::read_unaligned(data as *const libc::c_int);
                        r.segment = usize::try_from(size).ok().filter(|&s| s > 0);
                    }
                    _ => {}
                }
                c = libc::CMSG_NXTHDR(&m.msg_hdr, c);
            }
        }
        r
    }
}

/// A batched call's result: the count, 0 for a full (or empty) socket, or the error.
fn settle(r: libc::c_int) -> io::Result<usize> {
    if r >= 0 {
        return Ok(r as usize);
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
        _ => Err(e),
    }
}

/// Sets an int socket option.
fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: a valid socket and an int option.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &value as *const _ as *const _,
            std::mem::size_of::<libc::c_int>() as _,
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Asks the kernel to stamp each datagram's arrival and report the socket's overflow drops.
pub fn enable_receive_stamps(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
    set_int(fd, libc::SOL_SOCKET, libc::SO_RXQ_OVFL, 1)
}

/// Sending: the kernel cuts each message into datagrams of `size` bytes (UDP_SEGMENT, GSO).
pub fn enable_gso(fd: RawFd, size: usize) -> io::Result<()> {
    let size = libc::c_int::try_from(size).unwrap_or(libc::c_int::MAX);
    set_int(fd, libc::SOL_UDP, libc::UDP_SEGMENT, size).map_err(|e| unsupported("UDP_SEGMENT", e))
}

/// Receiving: the kernel may hand up several datagrams of one size as one message (UDP_GRO).
pub fn enable_gro(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::SOL_UDP, libc::UDP_GRO, 1).map_err(|e| unsupported("UDP_GRO", e))
}

/// Checks that this kernel takes UDP_SEGMENT and UDP_GRO, on a socket of its own.
pub fn offload_available() -> io::Result<()> {
    let sock = std::net::UdpSocket::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    enable_gso(sock.as_raw_fd(), 1400)?;
    enable_gro(sock.as_raw_fd())
}

/// The error of a UDP offload option the kernel refused (`what`: its name).
pub fn unsupported(what: &str, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("--gso: this kernel refused {what} ({e}); it needs Linux 5.0 or later; run without --gso"),
    )
}
