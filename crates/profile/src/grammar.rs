//! The order of a group's flowops: data flowops need an open connection of the right
//! protocol, `connect` a closed one, `disconnect` an open one. A transaction that repeats is
//! walked twice, so one that does not leave the flow as it found it is caught where its next
//! iteration would fail.

use crate::build::Spans;
use crate::error::{ProfileError, Source};
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

/// One flowop run on a flow in state `conn`.
fn step(conn: &mut Conn, op: &Op, protocol: Protocol) -> Result<(), String> {
    let name = op.name();
    let (udp, other) = match op {
        Op::Connect => {
            if *conn == Conn::Open {
                return Err(
                    "connect: the flow is already connected (one connection per flow); \
                            disconnect first"
                        .into(),
                );
            }
            *conn = Conn::Open;
            return Ok(());
        }
        Op::Disconnect => {
            if *conn != Conn::Open {
                return Err("disconnect: the flow is not connected".into());
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
        return Err(format!(
            "{name} needs protocol {needs}; this group's protocol is {proto}: use {other}"
        ));
    }
    match conn {
        Conn::Open => Ok(()),
        Conn::Never => Err(format!(
            "{name} before any connect: add {{ op = \"connect\" }} before it"
        )),
        Conn::Closed => Err(format!(
            "{name} after disconnect without a new connect: add {{ op = \"connect\" }} before it"
        )),
    }
}
