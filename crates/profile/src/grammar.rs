//! The order of a group's flowops: data flowops need an open connection of the right
//! protocol, `connect` a closed one, `disconnect` an open one. A transaction that repeats is
//! walked twice, so one that does not leave the flow as it found it is caught where its next
//! iteration would fail.

use crate::error::{ProfileError, Source};
use crate::spans::Spans;
use fathom_proto::profile::{Op, ProfilePlan, Protocol, Repeat};

/// Said of an error found on a transaction's second pass.
const AGAIN: &str =
    " (on the transaction's next iteration: a transaction that repeats must end as it began)";

/// The state of a flow's connection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Conn {
    /// No connect yet.
    Never,
    /// Connected.
    Open,
    /// Closed by a disconnect.
    Closed,
}

/// Checks every group's flowops in the order they run.
pub(crate) fn check(src: &Source, plan: &ProfilePlan, spans: &Spans) -> Result<(), ProfileError> {
    for (g, gs) in plan.groups.iter().zip(&spans.groups) {
        let mut conn = Conn::Never;
        for (t, ts) in g.program.transactions.iter().zip(&gs.transactions) {
            let passes = match t.repeat {
                Repeat::Iterations(n) if n <= 1 => 1,
                _ => 2,
            };
            for pass in 0..passes {
                for (f, os) in t.ops.iter().zip(&ts.ops) {
                    for _ in 0..f.count.min(2) {
                        step(&mut conn, &f.op, g.protocol).map_err(|m| {
                            let again = if pass == 1 { AGAIN } else { "" };
                            src.error(os.op.clone(), format!("{m}{again}"))
                        })?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Why a flowop cannot run where it stands.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum OrderError {
    /// A connect on an open connection.
    #[error("connect: the flow is already connected (one connection per flow); disconnect first")]
    Connected,
    /// A disconnect with no open connection.
    #[error("disconnect: the flow is not connected")]
    NotConnected,
    /// A data flowop of the other protocol.
    #[error("{op} needs protocol {needs}; this group's protocol is {protocol}: use {other}")]
    Protocol {
        /// The flowop.
        op: &'static str,
        /// The protocols it runs on.
        needs: &'static str,
        /// The group's protocol.
        protocol: &'static str,
        /// The flowop that does the same on the group's protocol.
        other: &'static str,
    },
    /// A data flowop before the first connect.
    #[error("{0} before any connect: add {{ op = \"connect\" }} before it")]
    NeverConnected(&'static str),
    /// A data flowop after a disconnect.
    #[error("{0} after disconnect without a new connect: add {{ op = \"connect\" }} before it")]
    Closed(&'static str),
}

/// One flowop run on a flow in state `conn`.
fn step(conn: &mut Conn, op: &Op, protocol: Protocol) -> Result<(), OrderError> {
    let name = op.name();
    let (udp, other) = match op {
        Op::Connect => {
            if *conn == Conn::Open {
                return Err(OrderError::Connected);
            }
            *conn = Conn::Open;
            return Ok(());
        }
        Op::Disconnect => {
            if *conn != Conn::Open {
                return Err(OrderError::NotConnected);
            }
            *conn = Conn::Closed;
            return Ok(());
        }
        Op::Think(_) => return Ok(()),
        Op::Write(_) => (false, "sendto"),
        Op::Read(_) => (false, "recv"),
        Op::SendTo(_) => (true, "write"),
        Op::Recv(_) => (true, "read"),
    };
    let proto = match protocol {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
        Protocol::Tls => "tls",
    };
    if udp != (protocol == Protocol::Udp) {
        let needs = if udp { "udp" } else { "tcp or tls" };
        return Err(OrderError::Protocol {
            op: name,
            needs,
            protocol: proto,
            other,
        });
    }
    match conn {
        Conn::Open => Ok(()),
        Conn::Never => Err(OrderError::NeverConnected(name)),
        Conn::Closed => Err(OrderError::Closed(name)),
    }
}
