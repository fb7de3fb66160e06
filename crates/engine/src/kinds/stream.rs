//! Bulk transfer: the leading side writes as fast as the socket takes it, the other reads.

use crate::kind::{sendfile, Flow, Io, Setup, Sockets, Step};
use crate::measure::counters::FlowStats;
use crate::tls::Wire;
use fathom_proto::plan::{Limit, TestPlan};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Work done per run before yielding to the worker's other flows.
const BYTES_PER_TURN: u64 = 4 << 20;
/// A sender's first write is this small, and it sends nothing more until the start ramp ends
/// ([`Io::ramp_until`], 2 ms after t0): every flow of every host gets its first bytes out at the
/// start instant before any of them takes a CPU for bulk writes, so the start skew between hosts
/// measures clocks and wake-ups, not who got a CPU first. It costs 2 ms of a measured window
/// without warm-up (0.02% of 10 s).
const FIRST_WRITE: usize = 1024;

/// Builds this side's flows of the stream kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
    s.tcp_flows(sockets, |f, sock, stats| {
        if s.side.leads(f.dir) {
            let (i, n) = s.place(f);
            let remaining = match s.plan.limit {
                Limit::Bytes(total) => TestPlan::share(total, i, n),
                _ => u64::MAX,
            };
            Box::new(Sender {
                wake: None,
                sock,
                stats,
                sent: 0,
                remaining,
                write: s.plan.write_size as usize,
                zerocopy: s.plan.zerocopy,
            })
        } else {
            if !sock.is_tls() {
                crate::measure::stamp::enable(sock.as_raw_fd());
            }
            Box::new(Receiver {
                sock,
                stats,
                received: 0,
                wait: s.worker_per_flow,
            })
        }
    })
}

struct Sender {
    /// The end of the start ramp while the sender waits for it.
    wake: Option<u64>,
    sock: Wire,
    stats: Arc<FlowStats>,
    sent: u64,
    remaining: u64,
    write: usize,
    zerocopy: bool,
}

impl Sender {
    /// Ends the stream; with TLS, waits (for writability) until its last records are out.
    fn finish(&mut self) -> io::Result<Step> {
        Ok(if self.sock.close()? {
            Step::Done
        } else {
            Step::Wait
        })
    }
}

impl Flow for Sender {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, mio::Interest::WRITABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let start = self.sent;
        loop {
            let now = crate::clock::now_ns();
            if now >= io.end_ns || self.remaining == 0 {
                return self.finish();
            }
            if self.sent > 0 && now < io.ramp_until {
                self.wake = Some(io.ramp_until);
                return Ok(Step::Wait);
            }
            self.wake = None;
            if self.sent - start >= BYTES_PER_TURN {
                return Ok(Step::Again);
            }
            let first = self.sent == 0;
            let want = if first {
                FIRST_WRITE.min(self.write)
            } else {
                self.write
            };
            let want = want.min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
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
                    if first {
                        return Ok(Step::Again);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        self.finish()
    }

    fn timer(&self) -> Option<u64> {
        self.wake
    }
}

struct Receiver {
    sock: Wire,
    stats: Arc<FlowStats>,
    received: u64,
    /// Its end gave each flow a worker ([`Setup::worker_per_flow`]): wait in the reads.
    wait: bool,
}

impl Receiver {
    /// Reads once (the clock read `now`). With a worker per flow, a worker's only flow on a
    /// clear connection waits in the read itself until data comes, as iperf2's receiver threads
    /// do, rather than in the event loop (one `epoll_wait` less each time the socket runs dry);
    /// otherwise it reads and drops what is there.
    fn read(&mut self, io: &mut Io<'_>, now: u64) -> io::Result<usize> {
        let left = io.wait_until.saturating_sub(now);
        if self.wait && left > 0 && self.sock.can_wait(left) {
            self.sock.read_waiting(io.rbuf, left)
        } else {
            self.sock.read_drop(io.rbuf)
        }
    }
}

impl Flow for Receiver {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, mio::Interest::READABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        let start = self.received;
        if self.received == 0 && !self.sock.is_tls() {
            // The first read: note when the data reached this host, then stop stamping.
            let fd = self.sock.as_raw_fd();
            // One byte only: the kernel stamps a read with its last segment's arrival (and merges
            // segments queued behind it), and the first byte's is the one that says when this
            // flow began.
            match crate::measure::stamp::recv_stamped(fd, &mut io.rbuf[..1]) {
                Ok((0, _)) => return Ok(Step::Done),
                Ok((n, at)) => {
                    crate::measure::stamp::disable(fd);
                    self.received = n as u64;
                    self.stats.set_received(self.received);
                    let now = crate::clock::now_ns();
                    self.stats.touch(now);
                    self.stats.set_first(at.unwrap_or(now).min(now));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let mut now = crate::clock::now_ns();
        loop {
            if self.received - start >= BYTES_PER_TURN {
                return Ok(Step::Again);
            }
            match self.read(io, now) {
                Ok(0) => return Ok(Step::Done),
                Ok(n) => {
                    now = crate::clock::now_ns();
                    if self.received == 0 {
                        // TLS: the first plaintext, when it was decrypted.
                        self.stats.set_first(now);
                    }
                    self.received += n as u64;
                    self.stats.set_received(self.received);
                    self.stats.touch(now);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Wait)
    }
}
