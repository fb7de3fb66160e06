//! The receiving side of a UDP stream flow: recvmmsg batches, each datagram's sequence number
//! and send time accounted against its kernel receive stamp.

use super::mmsg::{enable_receive_stamps, Batch, Received};
use super::send::CALLS_PER_TURN;
use super::seq::Sequence;
use crate::clock;
use crate::kind::{Flow, Io, Step};
use crate::measure::counters::FlowStats;
use fathom_proto::udp::{UdpOptions, HEADER_BYTES, SEQ_BYTES};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// After the stop, how long the receiver still reads datagrams in flight.
const GRACE_NS: u64 = 100_000_000;

/// One flow's receiver.
pub struct Receiver {
    sock: mio::net::UdpSocket,
    stats: Arc<FlowStats>,
    mmsg: Batch,
    got: Vec<Received>,
    slot: usize,
    seq: Sequence,
    bytes: u64,
    expected: Option<u64>,
    grace: Option<u64>,
    /// Sequence numbers (and, `stamped`, send times) are accounted.
    sequenced: bool,
    stamped: bool,
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap_or_default())
}

impl Receiver {
    /// The receiver of a flow of `o`'s datagrams, expecting `expected` of them (counted tests).
    pub fn new(
        sock: mio::net::UdpSocket,
        stats: Arc<FlowStats>,
        o: &UdpOptions,
        expected: Option<u64>,
    ) -> io::Result<Receiver> {
        if o.sequenced() {
            enable_receive_stamps(sock.as_raw_fd())?;
        }
        let batch = o.batch.max(1) as usize;
        Ok(Receiver {
            sock,
            stats,
            mmsg: Batch::new(batch),
            got: vec![
                Received {
                    len: 0,
                    at_ns: None,
                    dropped: None
                };
                batch
            ],
            slot: o.size as usize,
            seq: Sequence::default(),
            bytes: 0,
            expected,
            grace: None,
            sequenced: o.sequenced(),
            stamped: o.stamped(),
        })
    }

    /// True once every expected datagram arrived.
    fn complete(&self) -> bool {
        let c = &self.seq.counters;
        self.expected
            .is_some_and(|e| c.datagrams - c.duplicates >= e)
    }

    /// Accounts the `n` datagrams of the last batch, read into `buf`.
    fn account(&mut self, buf: &[u8], n: usize) {
        self.seq.counters.datagrams += n as u64;
        self.bytes += self.got[..n].iter().map(|r| r.len as u64).sum::<u64>();
        if !self.sequenced {
            return;
        }
        for (i, r) in self.got[..n].iter().enumerate() {
            let d = &buf[i * self.slot..i * self.slot + r.len.min(self.slot)];
            if d.len() >= SEQ_BYTES {
                self.seq.arrive(le_u64(&d[..SEQ_BYTES]));
            }
            if let (true, Some(at)) = (self.stamped && d.len() >= HEADER_BYTES, r.at_ns) {
                self.seq.transit(le_u64(&d[SEQ_BYTES..HEADER_BYTES]), at);
            }
            if let Some(x) = r.dropped {
                self.seq.counters.rxq_overflow = u64::from(x);
            }
        }
    }
}

impl Flow for Receiver {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(&mut self.sock, t, mio::Interest::READABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let first = self.seq.counters.calls;
        loop {
            let now = clock::now_ns();
            if self.complete() || self.grace.is_some_and(|g| now >= g) {
                return Ok(Step::Done);
            }
            let n = match self
                .mmsg
                .recv(self.sock.as_raw_fd(), io.rbuf, self.slot, &mut self.got)
            {
                Ok(0) => return Ok(Step::Wait),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            };
            self.account(io.rbuf, n);
            self.seq.counters.calls += 1;
            self.stats.set_received(self.bytes);
            self.stats.set_udp(&self.seq.counters);
            self.stats.touch(now);
            if self.seq.counters.calls - first >= CALLS_PER_TURN {
                return Ok(Step::Again);
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        self.grace = Some(clock::now_ns() + GRACE_NS);
        Ok(if self.complete() {
            Step::Done
        } else {
            Step::Wait
        })
    }

    fn timer(&self) -> Option<u64> {
        self.grace
    }
}
