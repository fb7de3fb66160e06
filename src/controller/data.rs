//! The controller's side of data connections: one socket per flow, options set before connect;
//! for UDP kinds each socket is paired with the agent's by a hello datagram the agent echoes.

use fathom_engine::{sockopt, Sockets};
use fathom_proto::plan::{KindId, TestPlan};
use fathom_proto::DataHello;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// What the agent opened for the test (its `Ready` answer).
pub struct AgentData {
    /// The agent's address for data.
    pub ip: IpAddr,
    /// TCP data port.
    pub port: u16,
    /// UDP ports, one per flow.
    pub udp_ports: Vec<u16>,
    /// Secret to present.
    pub cookie: [u8; 16],
}

/// Sets up this side's data sockets for `plan`'s kind.
pub fn connect(agent: &AgentData, plan: &TestPlan, bind: Option<IpAddr>) -> Result<Sockets, String> {
    let tcp = SocketAddr::new(agent.ip, agent.port);
    match plan.kind {
        KindId::Stream | KindId::Rr => plan
            .flows
            .iter()
            .map(|f| connect_tcp(tcp, agent.cookie, f.id, plan, bind).map(|s| (*f, s)).map_err(|e| format!("data connection {} to {tcp}: {e}", f.id)))
            .collect::<Result<_, _>>()
            .map(Sockets::Tcp),
        KindId::Crr => Ok(Sockets::Connect(tcp)),
        KindId::UdpRr => plan
            .flows
            .iter()
            .zip(&agent.udp_ports)
            .map(|(f, &port)| {
                let to = SocketAddr::new(agent.ip, port);
                pair_udp(to, agent.cookie, f.id, plan, bind).map(|s| (*f, s)).map_err(|e| format!("UDP flow {} to {to}: {e}", f.id))
            })
            .collect::<Result<_, _>>()
            .map(Sockets::Udp),
    }
}

fn bind_local(sock: &Socket, bind: Option<IpAddr>) -> std::io::Result<()> {
    match bind {
        Some(ip) => sock
            .bind(&SocketAddr::new(ip, 0).into())
            .map_err(|e| std::io::Error::new(e.kind(), format!("--bind {ip}: {e}"))),
        None => Ok(()),
    }
}

fn connect_tcp(agent: SocketAddr, cookie: [u8; 16], flow: u32, plan: &TestPlan, bind: Option<IpAddr>) -> std::io::Result<Socket> {
    let sock = Socket::new(Domain::for_address(agent), Type::STREAM, Some(Protocol::TCP))?;
    sockopt::apply(&sock, &plan.socket)?;
    bind_local(&sock, bind)?;
    sock.connect_timeout(&agent.into(), Duration::from_secs(10))?;
    (&sock).write_all(&DataHello { cookie, flow }.encode())?;
    Ok(sock)
}

/// A UDP socket connected to the agent's socket for this flow, once the agent echoed our hello.
fn pair_udp(agent: SocketAddr, cookie: [u8; 16], flow: u32, plan: &TestPlan, bind: Option<IpAddr>) -> std::io::Result<Socket> {
    let sock = Socket::new(Domain::for_address(agent), Type::DGRAM, Some(Protocol::UDP))?;
    sockopt::apply_buffers(&sock, &plan.socket)?;
    bind_local(&sock, bind)?;
    sock.connect(&agent.into())?;
    sock.set_read_timeout(Some(Duration::from_millis(250)))?;
    let hello = DataHello { cookie, flow }.encode();
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DataHello::LEN];
    for _ in 0..20 {
        sock.send(&hello)?;
        match sock.recv(&mut buf) {
            // SAFETY: recv initialized the first n bytes.
            Ok(n) if n == DataHello::LEN && buf.iter().zip(&hello).all(|(b, h)| unsafe { b.assume_init() } == *h) => {
                sock.set_read_timeout(None)?;
                return Ok(sock);
            }
            _ => {}
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the agent did not answer the UDP hello"))
}
