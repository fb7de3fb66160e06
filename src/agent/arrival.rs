//! The arrival of a test's TCP data connections. Every newcomer is accepted and checked at once,
//! side by side on one thread, under one deadline for the whole arrival: it proves it belongs to
//! the test with its hello (the test's cookie and a flow not yet taken) before anything else is
//! done for it, and strangers (silent, wrong, or beyond the test's own flows plus
//! [`SPARE_NEWCOMERS`], the oldest cut off first) are dropped without delaying the test. A TLS
//! test's handshakes run here too, side by side, each within its own deadline, so that the
//! session's thread stays free to hear Abort and Close.

use super::error::{AgentError, ArrivalError};
use super::event::{Arrival, Event};
use fathom_engine::tls::{self, Handshake, TlsEnd};
use fathom_proto::DataHello;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use socket2::Socket;
use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long all data connections of a test may take to arrive.
pub const ARRIVAL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a newcomer may take to send its hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// Newcomers waited on at once beyond the flows still to come; a new one cuts off the oldest.
pub const SPARE_NEWCOMERS: usize = 128;
/// How often the loop looks at the deadlines and at `stop` while nothing happens.
const TICK: Duration = Duration::from_millis(100);
const LISTENER: Token = Token(usize::MAX);

/// What the test's data connections must show.
pub struct Expected {
    /// The test's cookie.
    pub cookie: [u8; 16],
    /// How many flows come.
    pub flows: usize,
    /// TLS tests: this end's configuration.
    pub tls: Option<TlsEnd>,
}

/// A connection not yet handed to the session.
struct Newcomer {
    sock: TcpStream,
    /// Its place in the arrival order.
    seq: u64,
    until: Instant,
    hello: [u8; DataHello::LEN],
    got: usize,
    /// Once proven: its flow, and (TLS tests) its handshake.
    proven: Option<(u32, Option<Handshake>)>,
}

/// Where a newcomer stands after a step.
enum Step {
    Waiting,
    Stranger,
    Arrived(Box<Arrival>),
}

/// Accepts and checks the test's data connections until every flow has arrived, handing each to
/// the session as `Event::Flow`, or an error that ends the test. Stops when `stop` is set.
pub fn accept_flows(listener: Socket, want: Expected, stop: Arc<AtomicBool>, tx: Sender<Event>) {
    let r = Arrivals::new(listener, want).and_then(|mut a| a.run(&stop, &tx));
    if let Err(e) = r {
        let _ = tx.send(Event::Flow(Err(AgentError::Arrival(e))));
    }
}

struct Arrivals {
    poll: Poll,
    listener: TcpListener,
    want: Expected,
    /// Newcomers by token.
    slots: Vec<Option<Newcomer>>,
    free: Vec<usize>,
    /// Unproven newcomers, oldest first: (token, seq); entries whose slot moved on are skipped.
    order: VecDeque<(usize, u64)>,
    next_seq: u64,
    seen: Vec<bool>,
    arrived: usize,
}

impl Arrivals {
    fn new(listener: Socket, want: Expected) -> Result<Arrivals, ArrivalError> {
        let fail = ArrivalError::Wait;
        listener.set_nonblocking(true).map_err(fail)?;
        let mut listener = TcpListener::from_std(listener.into());
        let poll = Poll::new().map_err(fail)?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .map_err(fail)?;
        Ok(Arrivals {
            poll,
            listener,
            seen: vec![false; want.flows],
            want,
            slots: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
            next_seq: 0,
            arrived: 0,
        })
    }

    fn run(&mut self, stop: &AtomicBool, tx: &Sender<Event>) -> Result<(), ArrivalError> {
        let deadline = Instant::now() + ARRIVAL_TIMEOUT;
        let mut events = Events::with_capacity(1024);
        let mut sweep = Instant::now() + TICK;
        while self.arrived < self.want.flows && !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= deadline {
                return Err(late(self.arrived, self.want.flows));
            }
            if now >= sweep {
                self.sweep(now)?;
                sweep = now + TICK;
            }
            match self.poll.poll(&mut events, Some(TICK.min(deadline - now))) {
                Err(e) if e.kind() != io::ErrorKind::Interrupted => {
                    return Err(ArrivalError::Wait(e))
                }
                _ => {}
            }
            for ev in events.iter() {
                if ev.token() == LISTENER {
                    self.accept_all()?;
                } else if let Some(a) = self.step(ev.token().0)? {
                    self.arrived += 1;
                    if tx.send(Event::Flow(Ok(a))).is_err() {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// Accepts every waiting connection. Out of descriptors, the oldest stranger makes room; with
    /// none to cut off, the test fails saying why.
    fn accept_all(&mut self) -> Result<(), ArrivalError> {
        loop {
            match self.listener.accept() {
                Ok((sock, _)) => self.admit(sock),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    if !self.cut_oldest() {
                        let what = format!(
                            "this agent, at data connection {} of {},",
                            self.arrived + 1,
                            self.want.flows
                        );
                        return Err(ArrivalError::Descriptors(crate::fdlimit::explain(e, &what)));
                    }
                }
                Err(_) => return Ok(()),
            }
        }
    }

    fn admit(&mut self, mut sock: TcpStream) {
        let cap = self.want.flows - self.arrived + SPARE_NEWCOMERS;
        if self.order.len() >= cap {
            let slots = &self.slots;
            self.order.retain(|&(i, seq)| unproven(slots, i, seq));
            if self.order.len() >= cap {
                self.cut_oldest();
            }
        }
        let i = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        let interest = Interest::READABLE.add(Interest::WRITABLE);
        if self
            .poll
            .registry()
            .register(&mut sock, Token(i), interest)
            .is_err()
        {
            self.free.push(i);
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.order.push_back((i, seq));
        self.slots[i] = Some(Newcomer {
            sock,
            seq,
            until: Instant::now() + HELLO_TIMEOUT,
            hello: [0; DataHello::LEN],
            got: 0,
            proven: None,
        });
    }

    /// Drops the oldest newcomer that has not proven itself; false when there is none.
    fn cut_oldest(&mut self) -> bool {
        while let Some((i, seq)) = self.order.pop_front() {
            if unproven(&self.slots, i, seq) {
                self.drop_slot(i);
                return true;
            }
        }
        false
    }

    fn drop_slot(&mut self, i: usize) {
        if let Some(mut n) = self.slots[i].take() {
            let _ = self.poll.registry().deregister(&mut n.sock);
            self.free.push(i);
        }
    }

    /// Drops strangers whose hello is late; fails the test when a proven connection's TLS
    /// handshake is.
    fn sweep(&mut self, now: Instant) -> Result<(), ArrivalError> {
        for i in 0..self.slots.len() {
            let Some(n) = self.slots[i].as_ref().filter(|n| now >= n.until) else {
                continue;
            };
            if let Some((flow, _)) = n.proven {
                return Err(handshake_failed(flow, tls::late()));
            }
            self.drop_slot(i);
        }
        while let Some(&(i, seq)) = self.order.front() {
            if unproven(&self.slots, i, seq) {
                break;
            }
            self.order.pop_front();
        }
        Ok(())
    }

    /// Advances newcomer `i` as far as its socket allows.
    fn step(&mut self, i: usize) -> Result<Option<Box<Arrival>>, ArrivalError> {
        let Some(n) = self.slots.get_mut(i).and_then(Option::as_mut) else {
            return Ok(None);
        };
        match advance(n, &self.want, &mut self.seen) {
            Ok(Step::Waiting) => Ok(None),
            Ok(Step::Stranger) => {
                self.drop_slot(i);
                Ok(None)
            }
            Ok(Step::Arrived(a)) => {
                self.drop_slot(i);
                Ok(Some(a))
            }
            Err(e) => Err(e),
        }
    }
}

/// True while the newcomer `seq` holds slot `i` and has not proven itself.
fn unproven(slots: &[Option<Newcomer>], i: usize, seq: u64) -> bool {
    slots[i]
        .as_ref()
        .is_some_and(|n| n.seq == seq && n.proven.is_none())
}

/// Reads the rest of a newcomer's hello, checks it, and (TLS tests) shakes hands.
fn advance(n: &mut Newcomer, want: &Expected, seen: &mut [bool]) -> Result<Step, ArrivalError> {
    while n.proven.is_none() {
        match n.sock.read(&mut n.hello[n.got..]) {
            Ok(0) => return Ok(Step::Stranger),
            Ok(k) => n.got += k,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Waiting),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(Step::Stranger),
        }
        if n.got < DataHello::LEN {
            continue;
        }
        let flow = match DataHello::read_from(&mut &n.hello[..]) {
            Ok(h) if h.cookie == want.cookie && !seen.get(h.flow as usize).unwrap_or(&true) => {
                h.flow
            }
            _ => return Ok(Step::Stranger),
        };
        seen[flow as usize] = true;
        let shake = match &want.tls {
            Some(end) => Some(end.begin().map_err(|e| handshake_failed(flow, e))?),
            None => None,
        };
        n.until = Instant::now() + tls::HANDSHAKE_TIMEOUT;
        n.proven = Some((flow, shake));
    }
    let Some((flow, shake)) = n.proven.as_mut() else {
        return Ok(Step::Waiting);
    };
    let flow = *flow;
    if let Some(h) = shake {
        if !h
            .advance(&mut n.sock)
            .map_err(|e| handshake_failed(flow, e))?
        {
            return Ok(Step::Waiting);
        }
    }
    let tls = n.proven.take().and_then(|(_, h)| h).map(Handshake::finish);
    let sock = dup_blocking(&n.sock).map_err(|source| ArrivalError::Socket { flow, source })?;
    Ok(Step::Arrived(Box::new(Arrival { flow, sock, tls })))
}

/// A blocking socket for the same connection as `sock` (which is closed with its slot).
fn dup_blocking(sock: &TcpStream) -> io::Result<Socket> {
    use std::os::fd::AsFd;
    let s = Socket::from(sock.as_fd().try_clone_to_owned()?);
    s.set_nonblocking(false)?;
    Ok(s)
}

fn handshake_failed(flow: u32, source: io::Error) -> ArrivalError {
    ArrivalError::Handshake { flow, source }
}

/// The error of an arrival that ran out of time.
pub fn late(got: usize, flows: usize) -> ArrivalError {
    ArrivalError::Late {
        got,
        flows,
        secs: ARRIVAL_TIMEOUT.as_secs(),
    }
}
