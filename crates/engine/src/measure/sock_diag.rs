//! Every flow's TCP_INFO at every snapshot: one getsockopt per flow, or one netlink sock_diag
//! (INET_DIAG) dump of the end's sockets, as `ss` reads them, whichever costs less on this host.
//!
//! Both read every flow at every interval (the report's per-interval retransmits, segments and
//! limits are per flow and summed), which sampling flows in rotation would not. A getsockopt
//! costs a system call, a descriptor lookup (whose reference count the worker threads share)
//! and the kernel's `tcp_get_info`; a dump costs `tcp_get_info` and a reply per socket, but
//! walks the kernel's whole established-socket hash table once, whose size follows the host's
//! memory, not the test. So which is cheaper depends on the host and the flow count: from
//! [`DUMP_FROM`] flows, unless the table is too large for a dump of that many to pay, both are
//! timed once before the start and the cheaper is kept ([`TcpInfos::method`] says which). The kernel filters the dump by family, state and the port
//! all of an end's flows share (the data port: the local one on the accepting end, the peer's
//! on the connecting end); replies name each socket by its inode, which maps it to its flow.
//! Flows a dump misses (a socket already closed) are read with getsockopt; if netlink fails at
//! all, every flow is.

use super::counters::FlowStats;
use super::tcp_info;
use crate::clock;
use fathom_proto::sample::{FlowSnapshot, TcpInfo};
use socket2::SockRef;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// Below this many TCP flows on an end a dump is not tried: walking the hash table costs more
/// than a few getsockopt calls on any host (bench/RESULTS.md, "Measurement cost").
pub const DUMP_FROM: usize = 32;

/// `SOCK_DIAG_BY_FAMILY` (linux/sock_diag.h): the request and reply message type.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `INET_DIAG_INFO` (linux/inet_diag.h): the attribute carrying `struct tcp_info`.
const INET_DIAG_INFO: u16 = 2;
/// Size of `struct nlmsghdr`.
const NLMSG_HDR: usize = 16;
/// Size of `struct inet_diag_req_v2`.
const REQ_LEN: usize = 56;
/// Size of `struct inet_diag_msg`; its last field, `idiag_inode`, is at 68.
const MSG_LEN: usize = 72;
/// TCP states worth asking for: every one a flow's open socket can be in (established, the
/// handshake's first, and the closing ones), not listen, request or time-wait sockets.
const STATES: u32 = 1 << 1 | 1 << 2 | 1 << 4 | 1 << 5 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 11;
/// One receive: the kernel fills at most 32 KB per dump message batch.
const RECV_BUF: usize = 32 << 10;

/// Reads the TCP_INFO of an end's flows at every snapshot.
pub struct TcpInfos {
    /// (flow index, descriptor) of every flow with a TCP socket.
    flows: Vec<(usize, RawFd)>,
    dump: Option<Dump>,
    /// Each flow's last reading of a socket opened during the test.
    opened: Vec<Option<TcpInfo>>,
}

impl TcpInfos {
    /// For flows whose descriptors are `fds` (in flow order; negative: no TCP socket).
    pub fn new(fds: &[RawFd]) -> TcpInfos {
        let flows: Vec<(usize, RawFd)> = fds
            .iter()
            .enumerate()
            .filter(|(_, &fd)| fd >= 0)
            .map(|(i, &fd)| (i, fd))
            .collect();
        let mut t = TcpInfos {
            flows,
            dump: None,
            opened: Vec::new(),
        };
        if t.flows.len() >= DUMP_FROM && dump_may_pay(t.flows.len(), ehash_buckets()) {
            t.dump = Dump::new(&t.flows).ok();
            t.keep_the_cheaper();
        }
        t
    }

    /// Times a read of every flow each way (the better of two tries, this thread's CPU) and
    /// keeps the dump only if it costs less.
    fn keep_the_cheaper(&mut self) {
        let Some(mut dump) = self.dump.take() else {
            return;
        };
        let n = self.flows.iter().map(|&(i, _)| i + 1).max().unwrap_or(0);
        let mut out = vec![FlowSnapshot::default(); n];
        let cost = |read: &mut dyn FnMut(&mut [FlowSnapshot]) -> bool, out: &mut [FlowSnapshot]| {
            (0..2)
                .map(|_| {
                    out.iter_mut().for_each(|f| f.tcp = None);
                    let t = clock::thread_cpu_ns();
                    let ok = read(out);
                    (ok, clock::thread_cpu_ns().saturating_sub(t))
                })
                .fold((true, u64::MAX), |(a, m), (ok, c)| (a && ok, m.min(c)))
        };
        let (ok, by_dump) = cost(&mut |o| dump.read(o).is_ok(), &mut out);
        let (_, by_call) = cost(
            &mut |o| {
                self.read_missing(o);
                true
            },
            &mut out,
        );
        if ok && by_dump < by_call {
            self.dump = Some(dump);
        }
    }

    /// How the figures are read: "sock_diag" (one dump) or "getsockopt" (one call per flow).
    pub fn method(&self) -> &'static str {
        if self.dump.is_some() {
            "sock_diag"
        } else {
            "getsockopt"
        }
    }

    /// Fills `tcp` in `out` (one snapshot per flow, in flow order).
    pub fn read(&mut self, out: &mut [FlowSnapshot]) {
        if let Some(d) = &mut self.dump {
            if d.read(out).is_err() {
                self.dump = None;
            }
        }
        self.read_missing(out);
    }

    /// Fills `tcp` in `out` like [`TcpInfos::read`], and for sockets a kind opened during the
    /// test (the profile kind's, after the set-up chose how to read the others) from the
    /// descriptor its flow names in `stats` as it (re)connects; once that socket closed (the
    /// flow names none), its last figures stand.
    pub fn read_all(&mut self, out: &mut [FlowSnapshot], stats: &[Arc<FlowStats>]) {
        self.read(out);
        self.opened.resize(out.len(), None);
        for ((f, st), last) in out.iter_mut().zip(stats).zip(&mut self.opened) {
            let fd = st.fd();
            if f.tcp.is_none() {
                f.tcp = if fd >= 0 { tcp_info::read(fd) } else { *last };
            }
            if fd >= 0 && f.tcp.is_some() {
                *last = f.tcp;
            }
        }
    }

    /// Reads with getsockopt every flow the dump did not fill.
    fn read_missing(&self, out: &mut [FlowSnapshot]) {
        for &(i, fd) in &self.flows {
            if let Some(f) = out.get_mut(i).filter(|f| f.tcp.is_none()) {
                f.tcp = tcp_info::read(fd);
            }
        }
    }
}

/// Whether a dump could cost less than `flows` getsockopt calls in a hash table of `buckets`
/// (unknown: maybe). A dump walks every bucket, about 12 ns each here, and saves about 0.6 µs
/// per flow against getsockopt (bench/RESULTS.md, "The sampler, sixth session"): at 262,144
/// buckets, the table of a host with 24 GB, it cannot pay below some 5,000 flows, so it is not
/// even timed (each timing reads every flow four times before the start).
fn dump_may_pay(flows: usize, buckets: Option<usize>) -> bool {
    buckets.is_none_or(|b| flows.saturating_mul(64) >= b)
}

/// The buckets of the TCP established-socket hash table this network namespace's dumps walk
/// (Linux 6.1; negative when the namespace shares the host's table).
fn ehash_buckets() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_ehash_entries").ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .map(|n| n.unsigned_abs().min(usize::MAX as u64) as usize)
}

/// A netlink socket and the requests that dump an end's sockets.
struct Dump {
    sock: OwnedFd,
    /// One request per address family among the flows.
    requests: Vec<[u8; NLMSG_HDR + REQ_LEN]>,
    by_inode: HashMap<u32, usize>,
    seq: u32,
    buf: Vec<u8>,
}

impl Dump {
    fn new(flows: &[(usize, RawFd)]) -> io::Result<Dump> {
        let mut by_inode = HashMap::with_capacity(flows.len());
        let mut ends = Vec::with_capacity(flows.len());
        for &(i, fd) in flows {
            by_inode.insert(inode(fd)?, i);
            // SAFETY: the flow owns `fd` and keeps it open while the sampler runs.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            let sock = SockRef::from(&fd);
            // A socket already closed has no peer; it is read with getsockopt.
            let local = sock.local_addr().ok().and_then(|a| a.as_socket());
            let peer = sock.peer_addr().ok().and_then(|a| a.as_socket());
            if let (Some(l), Some(p)) = (local, peer) {
                ends.push((l, p));
            }
        }
        let common = |port: fn(&(SocketAddr, SocketAddr)) -> u16| {
            let first = ends.first().map(port)?;
            ends.iter().all(|e| port(e) == first).then_some(first)
        };
        // The local port when every flow shares it, else the peer's when they share that.
        let (sport, dport) = match common(|e| e.0.port()) {
            Some(p) => (p, 0),
            None => (0, common(|e| e.1.port()).unwrap_or(0)),
        };
        let mut families: Vec<u8> = ends
            .iter()
            .map(|(l, _)| match l {
                SocketAddr::V4(_) => libc::AF_INET as u8,
                SocketAddr::V6(_) => libc::AF_INET6 as u8,
            })
            .collect();
        families.sort_unstable();
        families.dedup();
        Ok(Dump {
            sock: netlink()?,
            requests: families
                .into_iter()
                .map(|f| request(f, sport, dport))
                .collect(),
            by_inode,
            seq: 0,
            buf: vec![0; RECV_BUF],
        })
    }

    fn read(&mut self, out: &mut [FlowSnapshot]) -> io::Result<()> {
        for r in 0..self.requests.len() {
            self.seq = self.seq.wrapping_add(1);
            let req = &mut self.requests[r];
            req[8..12].copy_from_slice(&self.seq.to_ne_bytes());
            // SAFETY: sends `req.len()` bytes from a live buffer on an open socket.
            let n = unsafe { libc::send(self.sock.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            while !self.receive(out)? {}
        }
        Ok(())
    }

    /// Reads one batch of replies into `out`; true once the dump is done.
    fn receive(&mut self, out: &mut [FlowSnapshot]) -> io::Result<bool> {
        let fd = self.sock.as_raw_fd();
        // SAFETY: receives into a live buffer of its own length.
        let n = unsafe { libc::recv(fd, self.buf.as_mut_ptr().cast(), self.buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let batch = &self.buf[..n as usize];
        let mut at = 0;
        while at + NLMSG_HDR <= batch.len() {
            let len = u32_at(batch, at) as usize;
            let ty = u16::from_ne_bytes([batch[at + 4], batch[at + 5]]);
            let seq = u32_at(batch, at + 8);
            if len < NLMSG_HDR || at + len > batch.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "sock_diag: a reply overruns its batch",
                ));
            }
            let body = &batch[at + NLMSG_HDR..at + len];
            if seq == self.seq {
                match ty {
                    t if t == libc::NLMSG_DONE as u16 => return Ok(true),
                    t if t == libc::NLMSG_ERROR as u16 => return Err(nl_error(body)),
                    SOCK_DIAG_BY_FAMILY => self.socket(body, out),
                    _ => {}
                }
            }
            at += align4(len);
        }
        Ok(false)
    }

    /// One socket's reply: its `inet_diag_msg` and attributes.
    fn socket(&self, msg: &[u8], out: &mut [FlowSnapshot]) {
        if msg.len() < MSG_LEN {
            return;
        }
        let Some(f) = self
            .by_inode
            .get(&u32_at(msg, MSG_LEN - 4))
            .and_then(|&i| out.get_mut(i))
        else {
            return;
        };
        let mut at = MSG_LEN;
        while at + 4 <= msg.len() {
            let len = u16::from_ne_bytes([msg[at], msg[at + 1]]) as usize;
            let ty = u16::from_ne_bytes([msg[at + 2], msg[at + 3]]);
            if len < 4 || at + len > msg.len() {
                return;
            }
            if ty == INET_DIAG_INFO {
                f.tcp = Some(tcp_info::decode(&msg[at + 4..at + len]));
                return;
            }
            at += align4(len);
        }
    }
}

/// A dump request: `nlmsghdr` then `inet_diag_req_v2` for TCP sockets of `family`, filtered to
/// a local port `sport` and a peer port `dport` (0: any), asking for `struct tcp_info`.
fn request(family: u8, sport: u16, dport: u16) -> [u8; NLMSG_HDR + REQ_LEN] {
    let mut r = [0u8; NLMSG_HDR + REQ_LEN];
    r[0..4].copy_from_slice(&((NLMSG_HDR + REQ_LEN) as u32).to_ne_bytes());
    r[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    r[6..8].copy_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    let q = NLMSG_HDR;
    r[q] = family;
    r[q + 1] = libc::IPPROTO_TCP as u8;
    r[q + 2] = 1 << (INET_DIAG_INFO - 1);
    r[q + 4..q + 8].copy_from_slice(&STATES.to_ne_bytes());
    r[q + 8..q + 10].copy_from_slice(&sport.to_be_bytes());
    r[q + 10..q + 12].copy_from_slice(&dport.to_be_bytes());
    r
}

/// A netlink sock_diag socket that never blocks the sampler for more than a second.
fn netlink() -> io::Result<OwnedFd> {
    // SAFETY: plain socket creation; the descriptor is owned at once.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nobody else.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    SockRef::from(&sock).set_read_timeout(Some(std::time::Duration::from_secs(1)))?;
    Ok(sock)
}

/// The inode that names a socket in sock_diag replies (they carry its low 32 bits).
fn inode(fd: RawFd) -> io::Result<u32> {
    // SAFETY: fstat writes a stat into a zeroed, valid buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; fd is open.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_ino as u32)
}

/// The error a `NLMSG_ERROR` reply carries (a negative errno first).
fn nl_error(body: &[u8]) -> io::Error {
    let errno = body
        .get(..4)
        .map(|b| -i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(libc::EPROTO);
    io::Error::from_raw_os_error(errno)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// Connected pairs on one listener; returns the listener to keep it alive.
    fn pairs(n: usize) -> (TcpListener, Vec<TcpStream>, Vec<TcpStream>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let clients: Vec<TcpStream> = (0..n)
            .map(|_| TcpStream::connect(l.local_addr().unwrap()).unwrap())
            .collect();
        let servers = (0..n).map(|_| l.accept().unwrap().0).collect();
        (l, clients, servers)
    }

    fn read_all(fds: &[RawFd]) -> (Vec<FlowSnapshot>, &'static str) {
        let mut t = TcpInfos::new(fds);
        let mut out = vec![FlowSnapshot::default(); fds.len()];
        t.read(&mut out);
        (out, t.method())
    }

    #[test]
    fn a_dump_reads_every_flow_on_either_end() {
        let (_l, clients, servers) = pairs(DUMP_FROM);
        // A socket closed both ways is out of the kernel's tables: getsockopt still reads it.
        clients[0].shutdown(std::net::Shutdown::Both).unwrap();
        servers[0].shutdown(std::net::Shutdown::Both).unwrap();
        let closed = |fd| tcp_info::read(fd).is_some_and(|t| t.state == 7);
        for _ in 0..200 {
            if closed(clients[0].as_raw_fd()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for end in [&clients, &servers] {
            let mut fds: Vec<RawFd> = end.iter().map(|s| s.as_raw_fd()).collect();
            fds.push(-1);
            let flows: Vec<(usize, RawFd)> = fds[..DUMP_FROM].iter().copied().enumerate().collect();
            let mut dumped = vec![FlowSnapshot::default(); fds.len()];
            Dump::new(&flows).unwrap().read(&mut dumped).unwrap();
            let missed: Vec<usize> = (0..fds.len())
                .filter(|&i| dumped[i].tcp.is_none())
                .collect();
            assert_eq!(
                missed,
                [0, DUMP_FROM],
                "the closed socket and the flow without one"
            );
            let (out, _) = read_all(&fds);
            for (f, fd) in out.iter().zip(&fds) {
                let want = (*fd >= 0).then(|| tcp_info::read(*fd).unwrap());
                let got = f.tcp.as_ref();
                assert_eq!(got.map(|t| t.state), want.as_ref().map(|t| t.state));
                assert_eq!(got.map(|t| t.snd_mss), want.as_ref().map(|t| t.snd_mss));
            }
        }
    }

    #[test]
    fn few_flows_use_getsockopt() {
        let (_l, clients, _servers) = pairs(2);
        let fds: Vec<RawFd> = clients.iter().map(|s| s.as_raw_fd()).collect();
        let (out, method) = read_all(&fds);
        assert_eq!(method, "getsockopt");
        assert!(out
            .iter()
            .all(|f| f.tcp.as_ref().is_some_and(|t| t.state == 1)));
    }

    #[test]
    fn a_dump_is_timed_only_where_the_table_is_small_enough() {
        assert!(!dump_may_pay(1000, Some(262_144)));
        assert!(dump_may_pay(5000, Some(262_144)));
        assert!(dump_may_pay(DUMP_FROM, Some(1024)));
        assert!(dump_may_pay(DUMP_FROM, None));
    }

    #[test]
    fn request_layout() {
        let r = request(libc::AF_INET as u8, 5301, 0);
        assert_eq!(u32_at(&r, 0) as usize, r.len());
        assert_eq!(r[NLMSG_HDR + 2], 2, "INET_DIAG_INFO's bit");
        assert_eq!(&r[NLMSG_HDR + 8..NLMSG_HDR + 10], &5301u16.to_be_bytes());
        assert_eq!(
            STATES & (1 << 6 | 1 << 10),
            0,
            "no time-wait or listen sockets"
        );
    }
}
