//! The controller's side of data connections: one socket per flow, options set before connect.

use fathom_engine::sockopt;
use fathom_proto::plan::{FlowPlan, TestPlan};
use fathom_proto::DataHello;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// Opens every flow's connection to the agent's data port and introduces it.
pub fn connect_flows(
    agent: SocketAddr,
    cookie: [u8; 16],
    plan: &TestPlan,
    bind: Option<IpAddr>,
) -> Result<Vec<(FlowPlan, Socket)>, String> {
    plan.flows
        .iter()
        .map(|f| {
            connect_one(agent, cookie, f.id, plan, bind)
                .map(|s| (*f, s))
                .map_err(|e| format!("data connection {} to {agent}: {e}", f.id))
        })
        .collect()
}

fn connect_one(agent: SocketAddr, cookie: [u8; 16], flow: u32, plan: &TestPlan, bind: Option<IpAddr>) -> std::io::Result<Socket> {
    let sock = Socket::new(Domain::for_address(agent), Type::STREAM, Some(Protocol::TCP))?;
    sockopt::apply(&sock, &plan.socket)?;
    if let Some(ip) = bind {
        sock.bind(&SocketAddr::new(ip, 0).into())
            .map_err(|e| std::io::Error::new(e.kind(), format!("--bind {ip}: {e}")))?;
    }
    sock.connect_timeout(&agent.into(), Duration::from_secs(10))?;
    (&sock).write_all(&DataHello { cookie, flow }.encode())?;
    Ok(sock)
}
