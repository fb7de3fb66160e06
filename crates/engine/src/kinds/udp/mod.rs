//! The UDP stream kind: the sending side sends numbered, timestamped datagrams (batched with
//! sendmmsg, paced by the open-loop pacer when a rate is set), the other side reads them in
//! batches with recvmmsg and accounts loss, duplicates, reordering and jitter.

mod coalesce;
mod counters;
mod mmsg;
mod recv;
mod send;
mod seq;

use crate::kind::{Flow, Setup, Sockets};
use fathom_proto::plan::{Limit, TestPlan};
pub use mmsg::{offload_available, unsupported};
use std::io;

/// Builds this side's flows of the udp kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
    let opts = s.udp_options()?;
    s.udp_flows(sockets, |f, sock, stats| {
        let (i, n) = s.place(f);
        let count = match s.plan.limit {
            Limit::Datagrams(total) => Some(TestPlan::share(total, i, n)),
            _ => None,
        };
        Ok(if s.side.leads(f.dir) {
            Box::new(send::Sender::new(sock, stats, &opts, count, (i, n))?) as Box<dyn Flow>
        } else {
            Box::new(recv::Receiver::new(sock, stats, &opts, count)?)
        })
    })
}
