//! Bulk transfer: the leading side writes as fast as the socket takes it, the other reads.

use crate::kind::{sendfile, Flow, FlowSetup, Io, Kind, Step};
use crate::measure::counters::FlowStats;
use fathom_proto::plan::{KindId, Limit};
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Work done per run before yielding to the worker's other flows.
const BYTES_PER_TURN: u64 = 4 << 20;

/// The stream kind.
pub struct Stream;

impl Kind for Stream {
    fn id(&self) -> KindId {
        KindId::Stream
    }

    fn flow(&self, s: FlowSetup) -> io::Result<Box<dyn Flow>> {
        s.stats.set_fd(s.socket.as_raw_fd());
        if s.side.leads(s.flow.dir) {
            let remaining = match s.plan.limit {
                Limit::Bytes(total) => fathom_proto::plan::TestPlan::share(total, s.index_in_dir, s.flows_in_dir),
                _ => u64::MAX,
            };
            Ok(Box::new(Sender {
                sock: s.socket,
                stats: s.stats,
                sent: 0,
                remaining,
                write: s.plan.write_size as usize,
                zerocopy: s.plan.zerocopy,
            }))
        } else {
            Ok(Box::new(Receiver { sock: s.socket, stats: s.stats, received: 0 }))
        }
    }
}

struct Sender {
    sock: mio::net::TcpStream,
    stats: Arc<FlowStats>,
    sent: u64,
    remaining: u64,
    write: usize,
    zerocopy: bool,
}

impl Sender {
    fn finish(&mut self) -> io::Result<Step> {
        match self.sock.shutdown(Shutdown::Write) {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => Err(e),
            _ => Ok(Step::Done),
        }
    }
}

impl Flow for Sender {
    fn source(&mut self) -> &mut dyn mio::event::Source {
        &mut self.sock
    }

    fn interest(&self) -> mio::Interest {
        mio::Interest::WRITABLE
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let start = self.sent;
        loop {
            let now = crate::clock::now_ns();
            if now >= io.end_ns || self.remaining == 0 {
                return self.finish();
            }
            if self.sent - start >= BYTES_PER_TURN {
                return Ok(Step::Again);
            }
            let want = self.write.min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
            let r = match io.zc_file {
                Some(file) if self.zerocopy => sendfile(self.sock.as_raw_fd(), file, want),
                _ => self.sock.write(&io.wbuf[..want]),
            };
            match r {
                Ok(n) => {
                    self.sent += n as u64;
                    self.remaining -= n as u64;
                    self.stats.set_sent(self.sent);
                    self.stats.touch(now);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn stop(&mut self) -> io::Result<Step> {
        self.finish()
    }
}

struct Receiver {
    sock: mio::net::TcpStream,
    stats: Arc<FlowStats>,
    received: u64,
}

impl Flow for Receiver {
    fn source(&mut self) -> &mut dyn mio::event::Source {
        &mut self.sock
    }

    fn interest(&self) -> mio::Interest {
        mio::Interest::READABLE
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let start = self.received;
        loop {
            if self.received - start >= BYTES_PER_TURN {
                return Ok(Step::Again);
            }
            match self.sock.read(io.rbuf) {
                Ok(0) => return Ok(Step::Done),
                Ok(n) => {
                    self.received += n as u64;
                    self.stats.set_received(self.received);
                    self.stats.touch(crate::clock::now_ns());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn stop(&mut self) -> io::Result<Step> {
        Ok(Step::Wait)
    }
}
