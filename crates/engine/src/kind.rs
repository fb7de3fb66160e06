//! The test kind, the flow state machine every kind implements, and what a kind is given to
//! build its flows; the registry of kinds is `crate::kinds`, which imports this and not back.
//!
//! A kind turns this side's data sockets into flows. A flow is a small state machine driven by a
//! worker's event loop: it does as much work as it can without blocking and says whether to wait
//! for readiness (or its timer), run again soon, or stop. Flows only count and record latencies;
//! the sampler reads their counters. A flow may start further flows (an acceptor starting one per
//! connection); those live until they finish.

use crate::measure::{counters::FlowStats, latency::Latency};
use crate::tls::{TlsEnd, Wire};
use fathom_proto::kind::{Descriptor, Transport};
use fathom_proto::plan::{FlowPlan, KindId, RrOptions, TestPlan};
use fathom_proto::udp::UdpOptions;
use socket2::Socket;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::Arc;

/// Which end of a test an endpoint is; the report names its hosts by the same roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The connecting end (the controller's own, or a client agent's).
    Client,
    /// The accepting end (the server agent).
    Server,
}

impl Side {
    /// True when this side sends the payload of flows going `dir` (or asks, for request/response).
    pub fn leads(self, dir: fathom_proto::plan::Direction) -> bool {
        use fathom_proto::plan::Direction::*;
        matches!(
            (self, dir),
            (Side::Client, Forward) | (Side::Server, Reverse)
        )
    }
}

/// Ciphertext a long-lived TLS connection reads per system call: four full records.
const TLS_READ: usize = 4 * (16_384 + 256);

/// The readiness a flow that both reads and writes its socket waits for.
pub const READ_WRITE: mio::Interest = mio::Interest::READABLE.add(mio::Interest::WRITABLE);

/// What a flow wants after a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Blocked: run again when a socket is ready or the flow's timer fires.
    Wait,
    /// More work is possible now; run again after the other flows had a turn.
    Again,
    /// Finished.
    Done,
}

/// How a kind's data sockets are set up on each end before the start; the generic set-up code
/// (the agent's session, the connecting side) asks the kind for this and does the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wiring {
    /// One TCP connection per flow: the client connects one per flow, naming the flow in a
    /// hello; the server accepts them all before the start ([`Sockets::Tcp`] on both ends).
    TcpPerFlow,
    /// One UDP socket per flow on each end, paired by a hello datagram the server echoes
    /// ([`Sockets::Udp`] on both ends).
    UdpPerFlow,
    /// The server hands its listener to the kind ([`Sockets::Listen`]); the client connects
    /// anew for every transaction ([`Sockets::Connect`]).
    TcpPerTransaction,
}

impl Wiring {
    /// What carries the payload.
    pub fn transport(self) -> Transport {
        match self {
            Wiring::TcpPerFlow | Wiring::TcpPerTransaction => Transport::Tcp,
            Wiring::UdpPerFlow => Transport::Udp,
        }
    }

    /// The sockets of every flow, once each arrived (one per flow, in plan order).
    pub fn per_flow(self, socks: Vec<(FlowPlan, Socket)>) -> Sockets {
        match self {
            Wiring::UdpPerFlow => Sockets::Udp(socks),
            Wiring::TcpPerFlow | Wiring::TcpPerTransaction => Sockets::Tcp(socks),
        }
    }
}

/// This side's data sockets, as set up before the start.
pub enum Sockets {
    /// One connected TCP socket per flow.
    Tcp(Vec<(FlowPlan, Socket)>),
    /// One connected TCP socket per flow, with its TLS session (handshake done) and how long
    /// the handshake took (ns).
    Tls(Vec<(FlowPlan, Socket, rustls::Connection, u64)>),
    /// One connected UDP socket per flow.
    Udp(Vec<(FlowPlan, Socket)>),
    /// No sockets yet: each flow connects to this address anew for every transaction, and
    /// opens each connection with its hello: the test's cookie (this one) and its flow id.
    Connect(SocketAddr, [u8; 16]),
    /// A listener accepting the connections the other side opens during the test; each must
    /// open with its hello carrying this cookie, or it is dropped unanswered and uncounted.
    Listen(Socket, [u8; 16]),
}

/// Per-worker resources lent to a flow while it runs.
pub struct Io<'a> {
    /// Payload to write, allocated once per worker.
    pub wbuf: &'a [u8],
    /// Scratch space to read into, allocated once per worker.
    pub rbuf: &'a mut [u8],
    /// An in-memory file holding `wbuf`'s bytes, for sendfile.
    pub zc_file: Option<RawFd>,
    /// Monotonic ns at which senders stop (u64::MAX: no time limit).
    pub end_ns: u64,
    /// Until this instant (monotonic ns) senders hold back after their first small write, so
    /// that every flow of every host gets going at the start before any takes a CPU for long.
    pub ramp_until: u64,
    /// When a read that finds nothing may wait in the kernel until data comes, rather than
    /// return to the event loop: until this instant (monotonic ns) at most; 0 = never. Set only
    /// for a worker's only flow (see `crate::recv_wait`).
    pub wait_until: u64,
    /// The worker's event registry, for flows that open sockets while running.
    pub registry: &'a mio::Registry,
    /// The running flow's token.
    pub token: mio::Token,
    /// The worker's latency histogram.
    pub latency: &'a Latency,
    /// Flows started by the running flow; the worker adopts them after the run.
    pub spawned: &'a mut Vec<Box<dyn Flow>>,
}

/// One flow's state machine.
pub trait Flow: Send {
    /// Registers the flow's socket(s) under `token`.
    fn register(&mut self, registry: &mio::Registry, token: mio::Token) -> io::Result<()>;
    /// Does as much work as possible without blocking.
    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step>;
    /// The time limit passed: senders finish, receivers keep draining.
    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step>;
    /// When the flow next wants to run regardless of readiness (monotonic ns).
    fn timer(&self) -> Option<u64> {
        None
    }
}

/// What a kind knows when it builds flows.
pub struct Setup<'a> {
    /// The whole test.
    pub plan: &'a Arc<TestPlan>,
    /// Which end we are.
    pub side: Side,
    /// The flows this end takes part in (all of them on the server; a client's share).
    pub ids: &'a [u32],
    /// Counters, one per entry of `ids`.
    pub stats: &'a [Arc<FlowStats>],
    /// The directory an agent reads and writes files below (`serve --files-root`); none on the
    /// controller's own end, whose files are the user's.
    pub files_root: Option<&'a std::path::Path>,
    /// TLS tests: this end's configuration (crr opens its sessions with it).
    pub tls: Option<&'a TlsEnd>,
    /// Profile tests: barriers shared with other tests of this process (a profile's groups).
    pub barriers: Option<&'a Arc<crate::kinds::SharedBarriers>>,
    /// The send buffer this end's path chose ([`crate::path::choose`]) for the connections a
    /// kind opens during the test; `None` leaves them as the plan says.
    pub sndbuf: Option<u32>,
    /// This end gave every flow a worker of its own for its path
    /// ([`crate::path::PathDefaults::workers`]): a stream's receivers wait in their reads.
    pub worker_per_flow: bool,
}

impl Setup<'_> {
    /// The counters of flow `id`.
    pub fn stats_of(&self, id: u32) -> Arc<FlowStats> {
        self.stats[self.ids.iter().position(|&i| i == id).unwrap_or(0)].clone()
    }

    /// This end's flows, as the plan describes them.
    pub fn own_flows(&self) -> impl Iterator<Item = &FlowPlan> {
        self.plan.flows.iter().filter(|f| self.ids.contains(&f.id))
    }

    /// The plan's request/response options (an error for a plan without them).
    pub fn rr_options(&self) -> io::Result<RrOptions> {
        self.plan
            .rr()
            .cloned()
            .ok_or_else(|| wrong_sockets(self.plan.kind.id()))
    }

    /// The plan's UDP stream options (an error for a plan without them).
    pub fn udp_options(&self) -> io::Result<UdpOptions> {
        self.plan
            .udp()
            .cloned()
            .ok_or_else(|| wrong_sockets(self.plan.kind.id()))
    }

    /// One flow per connected TCP socket, made by `make(flow, connection, its counters)`; each
    /// socket is named in its counters so the sampler reads its TCP_INFO.
    pub fn tcp_flows(
        &self,
        sockets: Sockets,
        mut make: impl FnMut(&FlowPlan, Wire, Arc<FlowStats>) -> Box<dyn Flow>,
    ) -> io::Result<Vec<Box<dyn Flow>>> {
        let socks: Vec<(FlowPlan, Socket, Option<rustls::Connection>)> = match sockets {
            Sockets::Tcp(v) => v.into_iter().map(|(f, s)| (f, s, None)).collect(),
            Sockets::Tls(v) => v.into_iter().map(|(f, s, c, _)| (f, s, Some(c))).collect(),
            _ => return Err(wrong_sockets(self.plan.kind.id())),
        };
        socks
            .into_iter()
            .map(|(f, sock, conn)| {
                let stats = self.stats_of(f.id);
                let sock = mio_tcp(sock)?;
                stats.set_fd(std::os::fd::AsRawFd::as_raw_fd(&sock));
                let wire = match (conn, self.tls) {
                    (Some(c), Some(end)) => Wire::tls(sock, c, end.clone(), TLS_READ),
                    _ => Wire::clear(sock),
                };
                Ok(make(&f, wire, stats))
            })
            .collect()
    }

    /// One flow per connected UDP socket, made by `make(flow, socket, its counters)`.
    pub fn udp_flows(
        &self,
        sockets: Sockets,
        mut make: impl FnMut(
            &FlowPlan,
            mio::net::UdpSocket,
            Arc<FlowStats>,
        ) -> io::Result<Box<dyn Flow>>,
    ) -> io::Result<Vec<Box<dyn Flow>>> {
        let Sockets::Udp(socks) = sockets else {
            return Err(wrong_sockets(self.plan.kind.id()));
        };
        socks
            .into_iter()
            .map(|(f, sock)| {
                sock.set_nonblocking(true)?;
                make(
                    &f,
                    mio::net::UdpSocket::from_std(sock.into()),
                    self.stats_of(f.id),
                )
            })
            .collect()
    }

    /// (index among the flows going the same way, how many go that way) for flow `f`.
    pub fn place(&self, f: &FlowPlan) -> (u64, u64) {
        let same = || self.plan.flows_in(f.dir);
        (
            same().position(|g| g.id == f.id).unwrap_or(0) as u64,
            same().count() as u64,
        )
    }
}

/// What builds a kind's flows on one side from its sockets.
pub type MakeFlows = fn(&Setup<'_>, Sockets) -> io::Result<Vec<Box<dyn Flow>>>;

/// What a kind gets on a loopback path when the plan leaves the choice open ([`crate::path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loopback {
    /// Nothing: the plan's options apply as they are.
    Untouched,
    /// Small send buffers, and each flow's receiver on its sender's CPU (a stream).
    ReceiverOnSenderCpu,
    /// Each end on CPUs of its own, as between two hosts (request/response): on one CPU a
    /// transaction never wakes another CPU, which no network path gives (`crate::path::apart`).
    EndsApart,
}

/// A test kind: the behaviour half of its descriptor (the data half is
/// [`fathom_proto::kind::Descriptor`]); the registry (`crate::kinds`) finds it with
/// `Kind::of`.
pub struct Kind {
    id: KindId,
    wiring: Wiring,
    flows: MakeFlows,
    loopback: Loopback,
}

impl Kind {
    /// The kind `id`, whose sockets are set up as `wiring` and whose flows `flows` builds.
    pub(crate) const fn new(id: KindId, wiring: Wiring, flows: MakeFlows) -> Kind {
        Kind {
            id,
            wiring,
            flows,
            loopback: Loopback::Untouched,
        }
    }

    /// The same kind, given `loopback` on a loopback path.
    pub(crate) const fn on_loopback(self, loopback: Loopback) -> Kind {
        Kind { loopback, ..self }
    }

    /// What it gets on a loopback path.
    pub fn loopback(&self) -> Loopback {
        self.loopback
    }

    /// Its id.
    pub fn id(&self) -> KindId {
        self.id
    }

    /// How its sockets are set up on each end.
    pub fn wiring(&self) -> Wiring {
        self.wiring
    }

    /// Its name, transport, pattern, metrics and report figures.
    pub fn descriptor(&self) -> &'static Descriptor {
        self.id.descriptor()
    }

    /// Builds this side's flows from its sockets.
    pub fn flows(&self, setup: &Setup<'_>, sockets: Sockets) -> io::Result<Vec<Box<dyn Flow>>> {
        (self.flows)(setup, sockets)
    }
}

/// Turns a connected socket into a non-blocking mio stream.
pub fn mio_tcp(sock: Socket) -> io::Result<mio::net::TcpStream> {
    sock.set_nonblocking(true)?;
    Ok(mio::net::TcpStream::from_std(sock.into()))
}

/// The error for sockets a kind cannot use.
pub fn wrong_sockets(kind: KindId) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} was given the wrong kind of sockets", kind.name()),
    )
}

/// Writes from an in-memory file with sendfile; `count` bytes from its start.
pub fn sendfile(sock: RawFd, file: RawFd, count: usize) -> io::Result<usize> {
    let mut off: libc::off_t = 0;
    // SAFETY: both descriptors are owned by the caller; `off` is a valid pointer.
    let n = unsafe { libc::sendfile(sock, file, &mut off, count) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
