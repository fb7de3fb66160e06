//! The connecting side of data connections (the controller's own end, or a client agent's):
//! one socket per flow, options set before connect; for UDP kinds each socket is paired with the
//! server's by a hello datagram the server echoes.

use fathom_engine::kind::{Kind, Wiring};
use fathom_engine::tls::TlsEnd;
use fathom_engine::{sockopt, Sockets};
use fathom_proto::plan::TestPlan;
use fathom_proto::DataHello;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// What the server opened for the test (its `Ready` answer), as the connecting side needs it.
pub struct ServerData {
    /// The server's address for data.
    pub ip: IpAddr,
    /// TCP data port.
    pub port: u16,
    /// UDP ports, one per flow in `ids` order.
    pub udp_ports: Vec<u16>,
    /// Secret to present.
    pub cookie: [u8; 16],
    /// TLS tests: the DER of the certificate the server presents.
    pub cert: Option<Vec<u8>>,
}

/// Why the connecting side could not set up a test's data path; each names the flow and the
/// address at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The TLS client could not be built.
    #[error("{0}")]
    Tls(String),
    /// A TLS test whose server named no certificate to pin.
    #[error("the agent named no certificate for a TLS test")]
    NoCertificate,
    /// The plan's kind is not one this build has.
    #[error("{0}")]
    Kind(std::io::Error),
    /// A TCP data connection failed.
    #[error("data connection {flow} to {to}: {source}")]
    Tcp {
        /// The flow.
        flow: u32,
        /// The server's data address.
        to: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A UDP flow could not be paired with the server's socket.
    #[error("UDP flow {flow} to {to}: {source}")]
    Udp {
        /// The flow.
        flow: u32,
        /// The server's socket for it.
        to: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The connecting end of `plan`'s TLS, pinning `cert` (`None` for a clear test).
pub fn tls_client(plan: &TestPlan, cert: Option<Vec<u8>>) -> Result<Option<TlsEnd>, ConnectError> {
    match (&plan.tls, cert) {
        (None, _) => Ok(None),
        (Some(opts), Some(cert)) => TlsEnd::client(cert, opts)
            .map(Some)
            .map_err(|e| ConnectError::Tls(e.to_string())),
        (Some(_), None) => Err(ConnectError::NoCertificate),
    }
}

/// Sets up the data sockets of flows `ids` as `plan`'s kind wires them.
pub fn connect(
    server: &ServerData,
    plan: &TestPlan,
    ids: &[u32],
    bind: Option<IpAddr>,
) -> Result<Sockets, ConnectError> {
    let tcp = SocketAddr::new(server.ip, server.port);
    let own = || plan.flows.iter().filter(|f| ids.contains(&f.id));
    let dial = Dialer {
        cookie: server.cookie,
        plan,
        bind,
    };
    let kind = Kind::of(plan.kind.id()).map_err(ConnectError::Kind)?;
    match kind.wiring() {
        Wiring::TcpPerFlow => own()
            .map(|f| {
                dial.tcp(tcp, f.id)
                    .map(|s| (*f, s))
                    .map_err(|source| ConnectError::Tcp {
                        flow: f.id,
                        to: tcp,
                        source,
                    })
            })
            .collect::<Result<_, _>>()
            .map(Sockets::Tcp),
        Wiring::TcpPerTransaction => Ok(Sockets::Connect(tcp, server.cookie)),
        Wiring::UdpPerFlow => own()
            .zip(&server.udp_ports)
            .map(|(f, &port)| {
                let to = SocketAddr::new(server.ip, port);
                dial.udp(to, f.id)
                    .map(|s| (*f, s))
                    .map_err(|source| ConnectError::Udp {
                        flow: f.id,
                        to,
                        source,
                    })
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

/// What every data socket of one test is opened with.
struct Dialer<'a> {
    cookie: [u8; 16],
    plan: &'a TestPlan,
    bind: Option<IpAddr>,
}

impl Dialer<'_> {
    /// A TCP connection to the agent's data port that names flow `flow` in its hello.
    fn tcp(&self, agent: SocketAddr, flow: u32) -> std::io::Result<Socket> {
        let sock = Socket::new(
            Domain::for_address(agent),
            Type::STREAM,
            Some(Protocol::TCP),
        )
        .map_err(|e| crate::fdlimit::explain(e, "this end"))?;
        sockopt::apply(&sock, &self.plan.socket)?;
        bind_local(&sock, self.bind)?;
        sock.connect_timeout(&agent.into(), Duration::from_secs(10))?;
        (&sock).write_all(&self.hello(flow))?;
        Ok(sock)
    }

    /// A UDP socket connected to the agent's socket for flow `flow`, once the agent echoed our
    /// hello.
    fn udp(&self, agent: SocketAddr, flow: u32) -> std::io::Result<Socket> {
        let sock = Socket::new(Domain::for_address(agent), Type::DGRAM, Some(Protocol::UDP))?;
        sockopt::apply_buffers(&sock, &self.plan.socket)?;
        bind_local(&sock, self.bind)?;
        sock.connect(&agent.into())?;
        sock.set_read_timeout(Some(Duration::from_millis(250)))?;
        let hello = self.hello(flow);
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DataHello::LEN];
        for _ in 0..20 {
            sock.send(&hello)?;
            match sock.recv(&mut buf) {
                // SAFETY: recv initialized the first n bytes.
                Ok(n)
                    if n == DataHello::LEN
                        && buf
                            .iter()
                            .zip(&hello)
                            .all(|(b, h)| unsafe { b.assume_init() } == *h) =>
                {
                    sock.set_read_timeout(None)?;
                    return Ok(sock);
                }
                _ => {}
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the agent did not answer the UDP hello",
        ))
    }

    /// The hello that names flow `flow` to the agent.
    fn hello(&self, flow: u32) -> [u8; DataHello::LEN] {
        DataHello {
            cookie: self.cookie,
            flow,
        }
        .encode()
    }
}
