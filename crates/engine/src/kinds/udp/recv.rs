//! The receiving side of a UDP stream flow: recvmmsg batches (with GRO, of messages holding
//! several datagrams), each datagram's sequence number and send time accounted against its
//! kernel receive stamp, read on arrival or on a timer as [`Coalesce`] decides.

use super::coalesce::Coalesce;
use super::mmsg::{enable_gro, enable_receive_stamps, Batch, Received};
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
    /// Bytes of room per message.
    slot: usize,
    seq: Sequence,
    bytes: u64,
    expected: Option<u64>,
    grace: Option<u64>,
    /// Sequence numbers (and, `stamped`, send times) are accounted.
    sequenced: bool,
    stamped: bool,
    coalesce: Coalesce,
    /// Registered for readiness (not reading on a timer).
    listening: bool,
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap_or_default())
}

/// The receive buffer the kernel granted a socket, bytes.
fn rcvbuf(sock: &mio::net::UdpSocket) -> u64 {
    crate::sockopt::get::<libc::c_int>(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF)
        .map_or(0, |(v, _)| u64::try_from(v).unwrap_or(0))
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
        if o.gso {
            enable_gro(sock.as_raw_fd())?;
        }
        let (batch, slot) = o.receive_slots();
        let (batch, slot) = (batch as usize, slot as usize);
        let coalesce = Coalesce::new(
            u64::from(o.batch) * u64::from(o.per_message()),
            rcvbuf(&sock),
            u64::from(o.size),
        );
        Ok(Receiver {
            sock,
            stats,
            mmsg: Batch::new(batch),
            got: vec![Received::default(); batch],
            slot,
            seq: Sequence::default(),
            bytes: 0,
            expected,
            grace: None,
            sequenced: o.sequenced(),
            stamped: o.stamped(),
            coalesce,
            listening: true,
        })
    }

    /// True once every expected datagram arrived.
    fn complete(&self) -> bool {
        let c = &self.seq.counters;
        self.expected
            .is_some_and(|e| c.datagrams - c.duplicates >= e)
    }

    /// Accounts the `n` messages of the last batch, read into `buf`; returns the datagrams.
    fn account(&mut self, buf: &[u8], n: usize) -> u64 {
        let before = self.seq.counters.datagrams;
        // The kernel stamps arrivals on CLOCK_REALTIME, senders on CLOCK_MONOTONIC.
        let realtime_ahead = match self.stamped {
            true => clock::realtime_ns().wrapping_sub(clock::now_ns()),
            false => 0,
        };
        for (i, r) in self.got[..n].iter().enumerate() {
            let len = r.len.min(self.slot);
            self.bytes += len as u64;
            let message = &buf[i * self.slot..i * self.slot + len];
            // A GRO message holds datagrams of `segment` bytes, the last maybe shorter.
            let segment = r.segment.unwrap_or(len).max(1);
            if !self.sequenced {
                self.seq.counters.datagrams += len.div_ceil(segment).max(1) as u64;
                continue;
            }
            for d in message.chunks(segment) {
                self.seq.counters.datagrams += 1;
                if d.len() >= SEQ_BYTES {
                    self.seq.arrive(le_u64(&d[..SEQ_BYTES]));
                }
                if let (true, Some(at)) = (self.stamped && d.len() >= HEADER_BYTES, r.at_ns) {
                    let at = at.wrapping_sub(realtime_ahead);
                    self.seq.transit(le_u64(&d[SEQ_BYTES..HEADER_BYTES]), at);
                }
            }
            if let Some(x) = r.dropped {
                self.seq.counters.rxq_overflow = u64::from(x);
            }
        }
        self.seq.counters.messages += n as u64;
        self.seq.counters.datagrams - before
    }

    /// The socket is empty: read next on a timer (not listening) or when it becomes readable.
    fn idle(&mut self, io: &mut Io<'_>, now: u64) -> io::Result<Step> {
        let timed = self.coalesce.drained(now).is_some();
        if timed == self.listening {
            match timed {
                true => io.registry.deregister(&mut self.sock)?,
                false => io
                    .registry
                    .register(&mut self.sock, io.token, mio::Interest::READABLE)?,
            }
            self.listening = !timed;
        }
        Ok(Step::Wait)
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
                Ok(0) => return self.idle(io, now),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            };
            let datagrams = self.account(io.rbuf, n);
            self.coalesce.read(datagrams);
            self.seq.counters.calls += 1;
            self.stats.set_received(self.bytes);
            self.stats.publish(&self.seq.counters);
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
        [self.grace, self.coalesce.next()]
            .into_iter()
            .flatten()
            .min()
    }
}
