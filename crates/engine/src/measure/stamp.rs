//! Kernel receive timestamps for a flow's first bytes: when data reached the host, not when a
//! busy worker got round to reading it. Several hosts' start skew is measured with these.

use std::io;
use std::os::fd::RawFd;

/// Asks the kernel to stamp arriving data on `fd` (SO_TIMESTAMPNS).
pub fn enable(fd: RawFd) {
    set(fd, 1);
}

/// Stops stamping (the option turns on a global hook, so it stays on only briefly).
pub fn disable(fd: RawFd) {
    set(fd, 0);
}

fn set(fd: RawFd, on: i32) {
    // SAFETY: passes a valid pointer to an int of the stated size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const i32).cast(),
            std::mem::size_of::<i32>() as u32,
        );
    }
}

/// Reads like `read(2)`, also returning when the data arrived (monotonic ns), if stamped.
pub fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; every pointer below points into live local buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: msg describes valid buffers for the duration of the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                stamp = realtime_to_monotonic(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n as usize, stamp))
}

/// Maps a CLOCK_REALTIME instant to CLOCK_MONOTONIC with the clocks' current difference. The
/// realtime reading is bracketed by two monotonic ones and placed at their midpoint; a bracket
/// wider than 2 µs (the thread was preempted between readings) is read again, up to four times,
/// keeping the tightest.
fn realtime_to_monotonic(real_ns: u64) -> Option<u64> {
    let bracket = || {
        let before = crate::clock::now_ns();
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: valid pointer; CLOCK_REALTIME always exists.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        let after = crate::clock::now_ns();
        let real_now = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        (after - before, before + (after - before) / 2, real_now)
    };
    let mut best = bracket();
    for _ in 1..4 {
        if best.0 <= 2_000 {
            break;
        }
        let next = bracket();
        if next.0 < best.0 {
            best = next;
        }
    }
    let (_, mono_now, real_now) = best;
    mono_now.checked_sub(real_now.checked_sub(real_ns)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn the_first_read_carries_its_arrival_time() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        enable(s.as_raw_fd());
        // Turning stamping on may take the kernel a moment (a deferred static key).
        std::thread::sleep(std::time::Duration::from_millis(50));
        let before = crate::clock::now_ns();
        c.write_all(b"hello").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut buf = [0u8; 16];
        let (n, at) = recv_stamped(s.as_raw_fd(), &mut buf).unwrap();
        assert_eq!(n, 5);
        let at = at.expect("stamped");
        let after = (at as i64 - before as i64) / 1000;
        assert!((-1000..15_000).contains(&after), "arrived at {after:+} µs");
        disable(s.as_raw_fd());
    }
}
