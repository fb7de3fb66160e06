//! The agent's side of data connections: a listener per test, with the test's socket options
//! set before listen() so accepted sockets inherit them (window scaling is fixed at the SYN).

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

/// Opens a listener for a test's data connections on `ip`, any free port.
pub fn listen(ip: IpAddr, plan: &TestPlan) -> io::Result<Socket> {
    let domain = if ip.is_ipv4() { Domain::IPV4 } else { Domain::IPV6 };
    let sock = Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?;
    sockopt::apply(&sock, &plan.socket)?;
    sock.bind(&SocketAddr::new(ip, 0).into())?;
    sock.listen(plan.flows.len().clamp(128, 65_535) as i32)?;
    Ok(sock)
}

/// Accepts connections until every flow of the test has arrived with the right cookie, handing
/// each to the session as `Event::Flow`. Strangers are dropped. Stops when `stop` is set.
pub fn accept_flows(listener: Socket, cookie: [u8; 16], flows: usize, stop: Arc<AtomicBool>, tx: Sender<Event>) {
    let deadline = Instant::now() + ARRIVAL_TIMEOUT;
    let mut seen = vec![false; flows];
    let mut got = 0;
    while got < flows && !stop.load(Ordering::Relaxed) {
        if Instant::now() > deadline {
            let _ = tx.send(Event::Flow(Err(format!(
                "only {got} of {flows} data connections arrived within {} s",
                ARRIVAL_TIMEOUT.as_secs()
            ))));
            return;
        }
        if !readable(&listener, 100) {
            continue;
        }
        let Ok((sock, _)) = listener.accept() else { continue };
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

fn readable(sock: &Socket, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) > 0 }
}
