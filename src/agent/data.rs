//! The agent's side of data connections: a TCP listener per test, with the test's socket options
//! set before listen() so accepted sockets inherit them (window scaling is fixed at the SYN; the
//! connections' arrival is [`super::arrival`]), and for UDP kinds one socket per flow, paired
//! with the controller's by a hello datagram; what strangers sent before the pairing is dropped.

use super::arrival::{late, ARRIVAL_TIMEOUT};
use super::event::{Arrival, Event};
use fathom_engine::sockopt;
use fathom_proto::plan::TestPlan;
use fathom_proto::DataHello;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

/// Opens a TCP listener for a test's data connections on `ip`, any free port.
pub fn listen(ip: IpAddr, plan: &TestPlan) -> io::Result<Socket> {
    let sock = Socket::new(
        Domain::for_address(SocketAddr::new(ip, 0)),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    sock.set_reuse_address(true)?;
    sockopt::apply(&sock, &plan.socket)?;
    sock.bind(&SocketAddr::new(ip, 0).into())?;
    sock.listen(plan.flows.len().clamp(128, 65_535) as i32)?;
    Ok(sock)
}

/// Opens one UDP socket per flow on `ip`.
pub fn udp_sockets(ip: IpAddr, plan: &TestPlan) -> io::Result<Vec<Socket>> {
    plan.flows
        .iter()
        .map(|_| {
            let sock = Socket::new(
                Domain::for_address(SocketAddr::new(ip, 0)),
                Type::DGRAM,
                Some(Protocol::UDP),
            )?;
            sockopt::apply_buffers(&sock, &plan.socket)?;
            sock.bind(&SocketAddr::new(ip, 0).into())?;
            Ok(sock)
        })
        .collect()
}

/// The local port of a bound socket.
pub fn port_of(sock: &Socket) -> u16 {
    sock.local_addr()
        .ok()
        .and_then(|a| a.as_socket())
        .map_or(0, |a| a.port())
}

/// Waits for each UDP socket's hello (cookie and its own flow id), connects the socket to the
/// sender and acknowledges with the same bytes; the controller retries until it hears back.
/// One poll covers every socket still waiting, so pairing costs the same for the 1st flow and
/// the 1500th (polling them one by one, 10 ms each, lost flows past the 250th).
pub fn pair_udp(socks: Vec<Socket>, cookie: [u8; 16], stop: Arc<AtomicBool>, tx: Sender<Event>) {
    let deadline = Instant::now() + ARRIVAL_TIMEOUT;
    let flows = socks.len();
    let mut waiting: Vec<(u32, Socket)> = (0..).zip(socks).collect();
    while !waiting.is_empty() && !stop.load(Ordering::Relaxed) {
        if Instant::now() > deadline {
            let late = late(flows - waiting.len(), flows);
            let _ = tx.send(Event::Flow(Err(late.into())));
            return;
        }
        // Highest first: swap_remove moves only an entry already looked at.
        for i in readable_among(&waiting, 100).into_iter().rev() {
            let (id, sock) = &waiting[i];
            if !answer_hello(sock, *id, cookie) {
                continue;
            }
            drain(sock);
            let (flow, sock) = waiting.swap_remove(i);
            let arrival = Arrival {
                flow,
                sock,
                tls: None,
            };
            if tx.send(Event::Flow(Ok(Box::new(arrival)))).is_err() {
                return;
            }
        }
    }
}

/// Reads one datagram from `sock`; if it is flow `id`'s hello, connects the socket to its sender
/// and echoes it. True once paired.
fn answer_hello(sock: &Socket, id: u32, cookie: [u8; 16]) -> bool {
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DataHello::LEN];
    let Ok((n, from)) = sock.recv_from_with_flags(&mut buf, libc::MSG_DONTWAIT) else {
        return false;
    };
    // SAFETY: recv_from initialized the first n bytes.
    let bytes: Vec<u8> = buf[..n]
        .iter()
        .map(|b| unsafe { b.assume_init() })
        .collect();
    match DataHello::read_from(&mut &bytes[..]) {
        Ok(h) if h.cookie == cookie && h.flow == id => {
            sock.connect(&from).is_ok() && sock.send(&bytes).is_ok()
        }
        _ => false,
    }
}

/// Drops every datagram queued on a socket just connected to its peer: connect() filters what
/// arrives from now on, not what strangers sent before (the peer sends nothing but its hello
/// until the start, and that needs no second answer).
fn drain(sock: &Socket) {
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DataHello::LEN];
    while sock.recv_with_flags(&mut buf, libc::MSG_DONTWAIT).is_ok() {}
}

/// The indices of the sockets in `socks` with a datagram to read, waiting up to `timeout_ms`.
fn readable_among(socks: &[(u32, Socket)], timeout_ms: i32) -> Vec<usize> {
    let mut polls: Vec<libc::pollfd> = socks
        .iter()
        .map(|(_, s)| libc::pollfd {
            fd: s.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: a valid array of pollfds and its length.
    let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, timeout_ms) };
    if n <= 0 {
        return Vec::new();
    }
    (0..polls.len())
        .filter(|i| polls[*i].revents != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::plan::{Direction, FlowPlan};
    use std::net::{Ipv4Addr, UdpSocket};

    /// A stranger's datagrams queued behind the real hello are dropped at the pairing, never
    /// left for the flow to count (issue 21, item 6).
    #[test]
    fn a_strangers_datagrams_queued_at_the_pairing_are_not_the_flows() {
        let plan = TestPlan {
            flows: vec![FlowPlan {
                id: 0,
                dir: Direction::Forward,
            }],
            ..TestPlan::default()
        };
        let socks = udp_sockets(IpAddr::V4(Ipv4Addr::LOCALHOST), &plan).unwrap();
        let to = SocketAddr::from((Ipv4Addr::LOCALHOST, port_of(&socks[0])));
        let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        let cookie = [9; 16];
        stranger.send_to(b"before the hello", to).unwrap();
        client
            .send_to(&DataHello { cookie, flow: 0 }.encode(), to)
            .unwrap();
        for _ in 0..5 {
            stranger.send_to(b"after the hello", to).unwrap();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        pair_udp(socks, cookie, Arc::default(), tx);
        let Ok(Event::Flow(Ok(paired))) = rx.try_recv() else {
            panic!("the flow was not paired");
        };
        paired.sock.set_nonblocking(true).unwrap();
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 64];
        assert!(
            paired.sock.recv(&mut buf).is_err(),
            "a stranger's datagram waits to be counted as the flow's"
        );
    }
}
