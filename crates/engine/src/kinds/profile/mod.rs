//! The profile kind: every flow runs a workload profile's program (transactions of flow
//! operations, `fathom_proto::profile`), the connecting end as written and the accepting end
//! its mirror image, on the workers and event loops every kind runs on (no thread per flow: a
//! profile's threads are its flows, spread over the workers like any test's).
//!
//! Connections open and close as the program says, so the kind is wired as crr is (one
//! listener on the accepting end; each connection opens with the test's hello naming its
//! flow). A data operation on a closed connection opens it first, and the program's end (or a
//! timed transaction's) closes it. Both ends draw random sizes from one generator per flow
//! seeded with the program's seed and the flow's id, so they agree on every size.
//!
//! A UDP group's flows move datagrams on a UDP socket each end opens per connection; the
//! connection itself proves and ends the flow ([`carrier`]). A TLS group's connections carry
//! a TLS session, its handshake part of their `connect`.
//!
//! A transaction marked `barrier` ends when every flow of the connecting end ended it, or,
//! when the test shares [`SharedBarriers`] with other groups' tests run from the same process,
//! every flow of every group ([`barrier`]); the mirror of a flow whose connection is open
//! there waits for the connecting end's word that it opened.
//!
//! A timed transaction (`duration`) ends on the connecting end, which then closes the
//! connection: that close is how the accepting end learns of it.

mod barrier;
mod carrier;
mod client;
mod counters;
mod cursor;
mod runner;
mod serve;

use crate::kind::{wrong_sockets, Flow, Setup, Sockets};
pub use barrier::SharedBarriers;
use barrier::{Barriers, Waiter};
use cursor::Cursor;
use fathom_proto::plan::{KindId, KindPlan, SocketOptions};
use fathom_proto::profile::{Op, Program};
use fathom_proto::DataHello;
use runner::Runner;
use std::io;
use std::sync::{Arc, Mutex};

/// Ciphertext a TLS connection reads per system call: four full records.
const TLS_READ: usize = 4 * (16_384 + 256);

/// Builds this side's flows of the profile kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
    let KindPlan::Profile(program) = &s.plan.kind else {
        return Err(wrong_sockets(KindId::Profile));
    };
    let datagrams = moves_datagrams(program);
    if datagrams && s.tls.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a profile's datagram flows cannot run over TLS",
        ));
    }
    let program = Arc::new(program.clone());
    match sockets {
        Sockets::Connect(server, cookie) => {
            let own = s.own_flows().count() as u32;
            let shared = match s.barriers {
                Some(b) => b.clone(),
                None => Arc::new(SharedBarriers::new([(own, &*program)])),
            };
            let barriers = Arc::new(Barriers::new(&program, shared));
            // The path's send buffer, unless the plan (a group's window) sets one; the
            // accepting end's connections take it from their listener (`path::choose`).
            let opts = SocketOptions {
                sndbuf: s.plan.socket.sndbuf.or(s.sndbuf),
                ..s.plan.socket.clone()
            };
            Ok(s.own_flows()
                .map(|f| {
                    let cursor = Cursor::new(program.clone(), f.id, false);
                    Box::new(client::Client {
                        server,
                        hello: DataHello { cookie, flow: f.id }.encode(),
                        opts: opts.clone(),
                        runner: Runner::new(cursor, s.stats_of(f.id), true, datagrams),
                        datagrams,
                        tls: s.tls.cloned(),
                        link: None,
                        wake: None,
                        barrier: Waiter::new(barriers.clone()),
                    }) as Box<dyn Flow>
                })
                .collect())
        }
        Sockets::Listen(listener, cookie) => {
            let slots = s
                .plan
                .flows
                .iter()
                .map(|f| {
                    let cursor = Cursor::new(program.clone(), f.id, true);
                    let runner = Runner::new(cursor, s.stats_of(f.id), false, datagrams);
                    serve::Slot::Ready(Box::new(runner))
                })
                .collect();
            let shared = serve::Shared {
                cookie,
                opts: s.plan.socket.clone(),
                slots: Mutex::new(slots),
                datagrams,
                tls: s.tls.cloned(),
                lone: s.plan.flows.len() == 1 && !s.plan.socket.busy_poll,
            };
            Ok(vec![serve::acceptor(listener, shared)?])
        }
        _ => Err(wrong_sockets(KindId::Profile)),
    }
}

/// Whether `program`'s data operations move datagrams (a UDP group's: the format allows
/// `sendto` and `recv` only there, and `write` and `read` only elsewhere).
pub(crate) fn moves_datagrams(program: &Program) -> bool {
    program
        .transactions
        .iter()
        .flat_map(|t| &t.ops)
        .any(|f| matches!(f.op, Op::SendTo(_) | Op::Recv(_)))
}
