//! The control conversation as the hostile tests hold it by hand: an agent in this process, a
//! connection past the handshake, and a test set up on it.

use fathom::agent::{Agent as InProcess, AgentConfig};
use fathom_proto::plan::{Direction, FlowPlan, TestPlan};
use fathom_proto::{Connection, Preamble, PreambleKind, ToAgent, ToController, MAX_FRAME};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// An agent running in this process on an ephemeral loopback port.
pub fn in_process(cfg: AgentConfig) -> SocketAddr {
    let agent = InProcess::bind("127.0.0.1:0".parse().unwrap(), cfg).unwrap();
    let addr = agent.local_addr().unwrap();
    agent.spawn().unwrap();
    addr
}

/// A control connection past the preamble, and the agent's challenge.
pub fn challenged(addr: SocketAddr) -> (Connection<TcpStream>, ToController) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&Preamble::ours(PreambleKind::Control).encode())
        .unwrap();
    Preamble::read_from(&mut s).unwrap();
    let mut c = Connection::new(s);
    let challenge = c.expect(MAX_FRAME).unwrap();
    assert!(matches!(challenge, ToController::Challenge { .. }));
    (c, challenge)
}

/// A control connection past the handshake (no key).
pub fn welcomed(addr: SocketAddr) -> Connection<TcpStream> {
    let (mut c, _) = challenged(addr);
    c.send(&ToAgent::Auth { mac: None }).unwrap();
    assert!(matches!(
        c.expect(MAX_FRAME).unwrap(),
        ToController::Welcome(_)
    ));
    c
}

/// The agent's first answer to `Setup(plan)`, and the connection (still open).
pub fn setup(addr: SocketAddr, plan: &TestPlan) -> (ToController, Connection<TcpStream>) {
    let mut c = welcomed(addr);
    c.send(&ToAgent::Setup(Box::new(plan.clone()))).unwrap();
    (c.expect(MAX_FRAME).unwrap(), c)
}

/// A stream plan of `flows` flows, each sent by the agent (reverse).
pub fn stream(flows: u32) -> TestPlan {
    TestPlan {
        flows: (0..flows)
            .map(|id| FlowPlan {
                id,
                dir: Direction::Reverse,
            })
            .collect(),
        ..TestPlan::default()
    }
}
