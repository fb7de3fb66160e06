//! Batched datagram system calls: `sendmmsg` of header + payload pairs and `recvmmsg` into
//! fixed slots with each datagram's kernel receive time and the socket's overflow count.
//!
//! The message arrays are allocated once per flow; the pointers in them are set again before
//! every call, to buffers the caller lends for that call only.

use fathom_proto::udp::HEADER_BYTES;
use std::io;
use std::os::fd::RawFd;

/// Room for one message's control data: a timespec (SO_TIMESTAMPNS) and a u32 (SO_RXQ_OVFL).
const CONTROL: usize = 64;

/// The message array of one flow.
pub struct Batch {
    msgs: Vec<libc::mmsghdr>,
    iovs: Vec<[libc::iovec; 2]>,
    control: Vec<[u64; CONTROL / 8]>,
}

// SAFETY: the raw pointers inside are rewritten before every call and point only into buffers
// borrowed for that call; between calls they are never read.
unsafe impl Send for Batch {}

/// One datagram read by [`Batch::recv`].
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// Its length.
    pub len: usize,
    /// When the kernel received it (CLOCK_REALTIME ns), if stamped.
    pub at_ns: Option<u64>,
    /// The socket's cumulative receive-buffer drop count (SO_RXQ_OVFL), if reported.
    pub dropped: Option<u32>,
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
            iovs: vec![[empty_iov(), empty_iov()]; n],
            control: vec![[0; CONTROL / 8]; n],
        }
    }

    /// Sends one datagram per entry of `headers`, each its first `header_len` bytes followed by
    /// `payload`; returns how many went (0 when the socket is full).
    pub fn send(
        &mut self,
        fd: RawFd,
        headers: &[[u8; HEADER_BYTES]],
        header_len: usize,
        payload: &[u8],
    ) -> io::Result<usize> {
        let n = headers.len().min(self.msgs.len());
        for ((m, iov), h) in self.msgs.iter_mut().zip(&mut self.iovs).zip(&headers[..n]) {
            *iov = [
                libc::iovec {
                    iov_base: h.as_ptr() as *mut _,
                    iov_len: header_len.min(HEADER_BYTES),
                },
                libc::iovec {
                    iov_base: payload.as_ptr() as *mut _,
                    iov_len: payload.len(),
                },
            ];
            // The rest of the header stays as `new` zeroed it: no name, no control data.
            m.msg_hdr.msg_iov = iov.as_mut_ptr();
            m.msg_hdr.msg_iovlen = 2;
        }
        // SAFETY: msgs[..n] point at iovecs that point into `headers` and `payload`, alive
        // for this call.
        let r = unsafe { libc::sendmmsg(fd, self.msgs.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT) };
        settle(r)
    }

    /// Reads up to `out.len()` datagrams into consecutive `slot`-byte slots of `buf`.
    pub fn recv(
        &mut self,
        fd: RawFd,
        buf: &mut [u8],
        slot: usize,
        out: &mut [Received],
    ) -> io::Result<usize> {
        let n = out.len().min(self.msgs.len()).min(buf.len() / slot.max(1));
        for (i, chunk) in buf.chunks_mut(slot).take(n).enumerate() {
            self.iovs[i][0] = libc::iovec {
                iov_base: chunk.as_mut_ptr() as *mut _,
                iov_len: chunk.len(),
            };
            // No name, as `new` left it; the kernel rewrites only the lengths and flags.
            let h = &mut self.msgs[i].msg_hdr;
            h.msg_iov = self.iovs[i].as_mut_ptr();
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

    /// The length, receive stamp and overflow count of message `i` after a `recvmmsg`.
    fn read_control(&self, i: usize) -> Received {
        let m = &self.msgs[i];
        let mut r = Received {
            len: m.msg_len as usize,
            at_ns: None,
            dropped: None,
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

/// Asks the kernel to stamp each datagram's arrival and report the socket's overflow drops.
pub fn enable_receive_stamps(fd: RawFd) -> io::Result<()> {
    for opt in [libc::SO_TIMESTAMPNS, libc::SO_RXQ_OVFL] {
        let on: libc::c_int = 1;
        // SAFETY: a valid socket and an int option.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &on as *const _ as *const _,
                std::mem::size_of::<libc::c_int>() as _,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
