//! The agent's side of data connections: a TCP listener per test, with the test's socket options
//! set before listen() so accepted sockets inherit them (window scaling is fixed at the SYN), and
//! for UDP kinds one socket per flow, paired with the controller's by a hello datagram.

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
use std::time::{Duration, Instant};

/// How long all data connections of a test may take to arrive.
const ARRIVAL_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Accepts connections until every flow of the test has arrived with the right cookie, handing
/// each to the session as `Event::Flow`. Strangers are dropped. Stops when `stop` is set.
pub fn accept_flows(
    listener: Socket,
    cookie: [u8; 16],
    flows: usize,
    stop: Arc<AtomicBool>,
    tx: Sender<Event>,
) {
    let deadline = Instant::now() + ARRIVAL_TIMEOUT;
    let mut seen = vec![false; flows];
    let mut got = 0;
    while got < flows && !stop.load(Ordering::Relaxed) {
        if Instant::now() > deadline {
            let _ = tx.send(Event::Flow(Err(late(got, flows))));
            return;
        }
        if !readable(&listener, 100) {
            continue;
        }
        let sock = match listener.accept() {
            Ok((sock, _)) => sock,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                let what = format!("this agent, at data connection {} of {flows},", got + 1);
                let e = crate::fdlimit::explain(e, &what);
                let _ = tx.send(Event::Flow(Err(e.to_string())));
                return;
            }
            Err(_) => continue,
        };
        let _ = sock.set_read_timeout(Some(Duration::from_secs(5)));
        match DataHello::read_from(&mut &sock) {
            Ok(h) if h.cookie == cookie && (h.flow as usize) < flows && !seen[h.flow as usize] => {
                let _ = sock.set_read_timeout(None);
                seen[h.flow as usize] = true;
                got += 1;
                if tx.send(Event::Flow(Ok((h.flow, sock)))).is_err() {
                    return;
                }
            }
            _ => drop(sock),
        }
    }
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
            let _ = tx.send(Event::Flow(Err(late(flows - waiting.len(), flows))));
            return;
        }
        // Highest first: swap_remove moves only an entry already looked at.
        for i in readable_among(&waiting, 100).into_iter().rev() {
            let (id, sock) = &waiting[i];
            if !answer_hello(sock, *id, cookie) {
                continue;
            }
            let (id, sock) = waiting.swap_remove(i);
            if tx.send(Event::Flow(Ok((id, sock)))).is_err() {
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

fn late(got: usize, flows: usize) -> String {
    format!(
        "only {got} of {flows} data connections arrived within {} s",
        ARRIVAL_TIMEOUT.as_secs()
    )
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
