//! The agent's side of data connections: a TCP listener per test, with the test's socket options
//! set before listen() so accepted sockets inherit them (window scaling is fixed at the SYN; the
//! connections' arrival is [`super::arrival`]), and for UDP kinds one socket per flow, paired
//! with the controller's by a hello datagram; what strangers sent before the pairing is dropped.

use super::arrival::{late, Arrival, ARRIVAL_TIMEOUT};
use super::session::Event;
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
pub fn pair_udp(socks: Vec<Socket>, cookie: [u8; 16], stop: Arc<AtomicBool>, tx: Sender<Event>) {
    let deadline = Instant::now() + ARRIVAL_TIMEOUT;
    let flows = socks.len();
    let mut waiting: Vec<Option<Socket>> = socks.into_iter().map(Some).collect();
    let mut got = 0;
    while got < flows && !stop.load(Ordering::Relaxed) {
        if Instant::now() > deadline {
            let _ = tx.send(Event::Flow(Err(late(got, flows))));
            return;
        }
        for (id, slot) in waiting.iter_mut().enumerate() {
            let Some(sock) = slot.as_ref() else { continue };
            if !readable(sock, 10) {
                continue;
            }
            let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DataHello::LEN];
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            // SAFETY: recv_from initialized the first n bytes.
            let bytes: Vec<u8> = buf[..n]
                .iter()
                .map(|b| unsafe { b.assume_init() })
                .collect();
            match DataHello::read_from(&mut &bytes[..]) {
                Ok(h) if h.cookie == cookie && h.flow as usize == id => {
                    if sock.connect(&from).is_err() || sock.send(&bytes).is_err() {
                        continue;
                    }
                    drain(sock);
                    got += 1;
                    let arrival = Arrival {
                        flow: h.flow,
                        sock: slot.take().expect("checked above"),
                        tls: None,
                    };
                    if tx.send(Event::Flow(Ok(arrival))).is_err() {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Drops every datagram queued on a socket just connected to its peer: connect() filters what
/// arrives from now on, not what strangers sent before (the peer sends nothing but its hello
/// until the start, and that needs no second answer).
fn drain(sock: &Socket) {
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DataHello::LEN];
    if sock.set_nonblocking(true).is_ok() {
        while sock.recv(&mut buf).is_ok() {}
        let _ = sock.set_nonblocking(false);
    }
}

fn readable(sock: &Socket, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) > 0 }
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
