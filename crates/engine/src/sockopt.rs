//! Socket options: applied to data sockets before connect/listen (so window scaling sees the
//! buffer sizes), and read back so results show what the kernel really granted.

use fathom_proto::plan::SocketOptions;
use fathom_proto::sample::FlowInfo;
use socket2::Socket;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// Applies the options that must precede connect/listen: buffers, MSS, congestion control, Nagle.
pub fn apply(sock: &Socket, o: &SocketOptions) -> io::Result<()> {
    apply_buffers(sock, o)?;
    if let Some(mss) = o.mss {
        sock.set_mss(mss)
            .map_err(|e| with_context(e, &format!("--mss {mss}")))?;
    }
    if let Some(cc) = &o.cc {
        sock.set_tcp_congestion(cc.as_bytes())
            .map_err(|e| match check_cc(cc) {
                Err(refused) => io::Error::new(e.kind(), refused),
                Ok(()) => with_context(e, &format!("--cc {cc}")),
            })?;
    }
    if let Some(rate) = o.max_pacing_rate {
        set_max_pacing_rate(sock.as_raw_fd(), rate).map_err(|e| with_context(e, "--rate"))?;
    }
    apply_connected(sock.as_raw_fd(), o)
}

/// SO_MAX_PACING_RATE: the kernel paces this socket's sends to `bytes_per_s` (with the fq
/// qdisc, or TCP's internal pacing without it).
pub fn set_max_pacing_rate(fd: RawFd, bytes_per_s: u64) -> io::Result<()> {
    // The kernel takes a 32-bit value, or a 64-bit one for rates beyond 4 GB/s.
    let (v32, v64) = (u32::try_from(bytes_per_s), bytes_per_s);
    let (ptr, len): (*const libc::c_void, usize) = match &v32 {
        Ok(v) => ((v as *const u32).cast(), 4),
        Err(_) => ((&v64 as *const u64).cast(), 8),
    };
    // SAFETY: ptr points at a live integer of `len` bytes.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            ptr,
            len as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Where the kernel lists the congestion control algorithms it has ready.
const AVAILABLE_CC: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// What the refusal of a congestion control a host lacks says, on this end or in an agent's
/// answer: the controller reads a message holding it as bad usage (exit 2).
pub const CC_REFUSED: &str = "is not a congestion control this host offers";

/// The congestion control algorithms this host has ready
/// (net.ipv4.tcp_available_congestion_control); none when it cannot be read.
pub fn available_cc() -> Vec<String> {
    std::fs::read_to_string(AVAILABLE_CC)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Checks `name` against this host's algorithms: those ready, and those the kernel would load
/// as a module (`tcp_NAME.ko` under /lib/modules). A host whose list cannot be read passes.
pub fn check_cc(name: &str) -> Result<(), CcRefused> {
    let offers = available_cc();
    if offers.is_empty() || offers.iter().any(|c| c == name) || loadable_cc(name) {
        return Ok(());
    }
    Err(CcRefused {
        name: name.to_string(),
        offers,
    })
}

/// A congestion control this host neither has ready nor could load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--cc {name} {refused} (it offers: {list}; net.ipv4.tcp_available_congestion_control)",
    refused = CC_REFUSED,
    list = .offers.join(", ")
)]
pub struct CcRefused {
    /// The algorithm asked for.
    pub name: String,
    /// The algorithms the host has ready.
    pub offers: Vec<String>,
}

/// True when the running kernel has a module for congestion control `name`.
fn loadable_cc(name: &str) -> bool {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return false;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let dir = format!("/lib/modules/{}/kernel/net/ipv4", release.trim());
    let module = format!("tcp_{name}.ko");
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with(&module))
    })
}

/// Sets the requested socket buffer sizes (any socket type).
pub fn apply_buffers(sock: &Socket, o: &SocketOptions) -> io::Result<()> {
    if let Some(n) = o.sndbuf {
        sock.set_send_buffer_size(n as usize)?;
    }
    if let Some(n) = o.rcvbuf {
        sock.set_recv_buffer_size(n as usize)?;
    }
    Ok(())
}

/// Applies the options that may be (re)set on a connected socket: Nagle, quick ACKs, busy poll.
pub fn apply_connected(fd: RawFd, o: &SocketOptions) -> io::Result<()> {
    if o.busy_poll {
        // Spin up to 50 µs in the kernel's receive path; needs CAP_NET_ADMIN above the sysctl.
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_BUSY_POLL, 50);
    }
    if !is_tcp(fd) {
        return Ok(());
    }
    if o.nodelay {
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
    }
    if o.quickack {
        set_quickack(fd);
    }
    Ok(())
}

fn is_tcp(fd: RawFd) -> bool {
    get::<i32>(fd, libc::SOL_SOCKET, libc::SO_TYPE).is_some_and(|(t, _)| t == libc::SOCK_STREAM)
}

/// Reads a socket option into a `T`, which must be plain integers (an int, an array of them, a
/// `repr(C)` kernel struct of them): the value and the bytes the kernel wrote, or `None` when
/// the call fails. Every getsockopt of the engine goes through here.
pub(crate) fn get<T: Default>(fd: RawFd, level: i32, name: i32) -> Option<(T, usize)> {
    let mut v = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a valid, writable T of `len` bytes, made only of integers, so any bytes
    // are a valid value; the kernel writes at most `len` bytes and says how many.
    let rc = unsafe { libc::getsockopt(fd, level, name, (&mut v as *mut T).cast(), &mut len) };
    (rc == 0).then_some((v, len as usize))
}

/// Turns delayed ACKs off until the kernel re-enables them (it does after some reads, so the
/// request/response kinds call this after every read).
#[inline]
pub fn set_quickack(fd: RawFd) {
    let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 1);
}

fn setsockopt_int(fd: RawFd, level: i32, name: i32, v: i32) -> io::Result<()> {
    // SAFETY: passes a valid pointer to an int of the stated size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn with_context(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// The socket facts of a connected data socket, for results.
pub fn flow_info(id: u32, sock: &Socket) -> FlowInfo {
    let addr = |a: io::Result<socket2::SockAddr>| {
        a.ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.to_string())
            .unwrap_or_default()
    };
    let (sndbuf, rcvbuf) = buffers(sock);
    FlowInfo {
        id,
        local: addr(sock.local_addr()),
        peer: addr(sock.peer_addr()),
        sndbuf,
        rcvbuf,
        sndbuf_end: sndbuf,
        rcvbuf_end: rcvbuf,
        cc: sock
            .tcp_congestion()
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .trim_end_matches('\0')
                    .to_string()
            })
            .unwrap_or_default(),
        mss: sock.mss().unwrap_or(0),
        first_byte_ns: None,
        last_byte_ns: None,
    }
}

/// SO_SNDBUF and SO_RCVBUF as the kernel reports them now.
pub fn buffers(sock: &Socket) -> (u32, u32) {
    (
        sock.send_buffer_size().unwrap_or(0) as u32,
        sock.recv_buffer_size().unwrap_or(0) as u32,
    )
}

/// A connected socket's path MTU (IP_MTU, or IPV6_MTU for an IPv6 socket), if the kernel
/// knows one.
pub fn path_mtu(fd: RawFd, ipv6: bool) -> Option<u32> {
    let (level, name) = if ipv6 {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU)
    } else {
        (libc::IPPROTO_IP, libc::IP_MTU)
    };
    let (v, _) = get::<libc::c_int>(fd, level, name)?;
    u32::try_from(v).ok().filter(|&v| v > 0)
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_connected_socket_has_a_path_mtu_and_a_listener_none() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert!(super::path_mtu(s.as_raw_fd(), false).is_some_and(|m| m >= 576));
        assert_eq!(super::path_mtu(l.as_raw_fd(), false), None);
    }
}
