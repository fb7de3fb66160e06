//! Rank 0's side: listen, take one registration from every other rank within a timeout, keep
//! their connections alive while the test runs, and tell them its exit code.

use super::error::{GatherError, Refusal};
use super::wire::{
    clean_name, exchange_preambles, recv, Registration, ToRank, HANDSHAKE, HEARTBEAT, MAX_KEY,
    MAX_PENDING, RANK_DOMAIN, ROOT_DOMAIN,
};
use fathom_proto::{auth, Connection};
use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often rank 0 looks for new connections, finished registrations and late handshakes.
const TICK: Duration = Duration::from_millis(10);
/// Longest a write to a rank may block (a rank that stopped reading must not stall rank 0).
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// A rank that registered.
#[derive(Clone, Debug)]
pub struct Registered {
    /// Its rank.
    pub rank: u32,
    /// Its host name (as it said, cleaned).
    pub host: String,
    /// Its agent's control address: the registration's source address and the agent's port.
    pub agent: SocketAddr,
    /// Its agent's key, when the launch has no pre-shared key.
    pub key: Option<Vec<u8>>,
    /// Rank 0's address as this rank reached it.
    pub root_ip: IpAddr,
}

/// What rank 0 expects of a registration.
struct Expect {
    size: u32,
    launch: String,
    key: Option<Vec<u8>>,
}

/// The registrations so far, by rank (index 0 stays empty).
#[derive(Default)]
struct Registry {
    ranks: Vec<Option<(Registered, TcpStream)>>,
    count: usize,
    /// The last refusal and how many there were, for the timeout's message.
    refused: Option<(usize, String)>,
}

/// A connection in registration: its deadline, a handle to cut it off, and whether its thread
/// is done with it (registered or refused).
struct Pending {
    until: Instant,
    stream: TcpStream,
    done: Arc<AtomicBool>,
}

/// Rank 0's listener and the ranks registered with it. Dropping it stops the heartbeats and
/// tells every registered rank the exit code (1 unless [`Root::finish`] said otherwise).
pub struct Root {
    listener: TcpListener,
    expect: Arc<Expect>,
    registry: Arc<Mutex<Registry>>,
    stop: Arc<AtomicBool>,
    beats: Option<JoinHandle<()>>,
    code: u8,
}

impl Root {
    /// Listens on `addr` for the other `size - 1` ranks of launch `launch`, which must prove
    /// they hold `key` if given.
    pub fn listen(
        addr: SocketAddr,
        size: u32,
        launch: &str,
        key: Option<Vec<u8>>,
    ) -> io::Result<Root> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let registry = Arc::new(Mutex::new(Registry {
            ranks: (0..size).map(|_| None).collect(),
            ..Registry::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let beats = heartbeats(registry.clone(), stop.clone())?;
        Ok(Root {
            listener,
            expect: Arc::new(Expect {
                size,
                launch: launch.to_string(),
                key,
            }),
            registry,
            stop,
            beats: Some(beats),
            code: 1,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> io::Result<u16> {
        Ok(self.listener.local_addr()?.port())
    }

    /// Waits until every other rank registered, at most `timeout`; the error names the
    /// missing ranks (and the last refusal, if any).
    pub fn gather(&self, timeout: Duration) -> Result<Vec<Registered>, GatherError> {
        let deadline = Instant::now() + timeout;
        let mut pending: VecDeque<Pending> = VecDeque::new();
        loop {
            self.accept_all(&mut pending);
            let reg = lock(&self.registry);
            let now = Instant::now();
            pending.retain(|p| {
                let keep = !p.done.load(Ordering::SeqCst) && now < p.until;
                if !keep && !p.done.load(Ordering::SeqCst) {
                    let _ = p.stream.shutdown(Shutdown::Both);
                }
                keep
            });
            if reg.count + 1 >= self.expect.size as usize {
                return Ok(reg.ranks.iter().flatten().map(|(r, _)| r.clone()).collect());
            }
            if now >= deadline {
                return Err(missing(&reg, timeout));
            }
            drop(reg);
            std::thread::sleep(TICK);
        }
    }

    /// Takes every waiting connection into registration, each on its own thread; when
    /// [`MAX_PENDING`] are in registration, the oldest is cut off to make room (as the agent does
    /// with its handshakes), so idle strangers cannot keep a rank out.
    fn accept_all(&self, pending: &mut VecDeque<Pending>) {
        while let Ok((stream, peer)) = self.listener.accept() {
            if pending.len() >= MAX_PENDING {
                // One that has just registered is only forgotten, never cut off.
                if let Some(oldest) = pending
                    .pop_front()
                    .filter(|p| !p.done.load(Ordering::SeqCst))
                {
                    let _ = oldest.stream.shutdown(Shutdown::Both);
                }
            }
            let (Ok(handle), done) = (stream.try_clone(), Arc::new(AtomicBool::new(false))) else {
                continue;
            };
            let (expect, registry, flag) =
                (self.expect.clone(), self.registry.clone(), done.clone());
            let spawned = std::thread::Builder::new()
                .name("fathom-register".into())
                .spawn(move || register(stream, peer, &expect, &registry, &flag));
            if spawned.is_ok() {
                pending.push_back(Pending {
                    until: Instant::now() + HANDSHAKE,
                    stream: handle,
                    done,
                });
            }
        }
    }

    /// Tells every registered rank `code` as the test's exit code.
    pub fn finish(mut self, code: u8) {
        self.code = code;
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(b) = self.beats.take() {
            let _ = b.join();
        }
        let mut reg = lock(&self.registry);
        for (_, stream) in reg.ranks.iter_mut().flatten() {
            let _ = Connection::new(&*stream).send(&ToRank::Exit { code: self.code });
            let _ = stream.shutdown(Shutdown::Write);
        }
    }
}

/// The timeout's error: which ranks did not register, and the last refusal.
fn missing(reg: &Registry, timeout: Duration) -> GatherError {
    GatherError {
        absent: (1..reg.ranks.len() as u32)
            .filter(|&r| reg.ranks[r as usize].is_none())
            .collect(),
        expected: reg.ranks.len() - 1,
        secs: timeout.as_secs_f64(),
        refused: reg.refused.clone(),
    }
}

/// One connection's registration; a refusal is recorded and sent to the peer.
fn register(
    stream: TcpStream,
    peer: SocketAddr,
    expect: &Expect,
    registry: &Mutex<Registry>,
    done: &AtomicBool,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(HANDSHAKE));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut s = &stream;
    if exchange_preambles(&mut s).is_err() {
        done.store(true, Ordering::SeqCst);
        return;
    }
    let mut conn = Connection::new(&stream);
    let nonce = auth::nonce();
    let outcome = conn
        .send(&ToRank::Challenge {
            nonce,
            key_required: expect.key.is_some(),
        })
        .and_then(|_| recv::<Registration, _>(&mut conn))
        .map_err(Refusal::from)
        .and_then(|r| check(&r, &nonce, expect).map(|()| r));
    let mut reg = lock(registry);
    done.store(true, Ordering::SeqCst);
    let refusal = match outcome {
        Ok(r) => match reg.ranks.get(r.rank as usize) {
            Some(Some((first, _))) => Refusal::Twice {
                rank: r.rank,
                first: first.agent.ip(),
                again: peer.ip(),
            },
            _ => match accept(&r, peer, &stream, expect) {
                Ok(entry) => {
                    reg.ranks[r.rank as usize] = Some(entry);
                    reg.count += 1;
                    return;
                }
                Err(e) => e,
            },
        },
        Err(e) => e,
    };
    let message = format!(
        "rank 0 refused the registration from {}: {refusal}",
        peer.ip()
    );
    let _ = conn.send(&ToRank::Refused {
        message: message.clone(),
    });
    let n = reg.refused.as_ref().map_or(0, |(n, _)| *n);
    reg.refused = Some((n + 1, message));
}

/// Checks a registration against what rank 0 expects.
fn check(r: &Registration, nonce: &[u8; 32], expect: &Expect) -> Result<(), Refusal> {
    if let Some(key) = &expect.key {
        if !r
            .mac
            .is_some_and(|m| auth::verify_in(RANK_DOMAIN, key, nonce, &m))
        {
            return Err(Refusal::WrongKey);
        }
    } else if !r
        .key
        .as_ref()
        .is_some_and(|k| (16..=MAX_KEY).contains(&k.len()))
    {
        return Err(Refusal::NoAgentKey);
    }
    if r.size != expect.size {
        return Err(Refusal::Size {
            theirs: r.size,
            ours: expect.size,
        });
    }
    if r.launch != expect.launch {
        return Err(Refusal::Launch {
            theirs: clean_name(&r.launch),
            ours: expect.launch.clone(),
        });
    }
    if r.rank == 0 || r.rank >= expect.size {
        return Err(Refusal::Rank {
            rank: r.rank,
            max: expect.size - 1,
        });
    }
    if r.port == 0 {
        return Err(Refusal::PortZero);
    }
    Ok(())
}

/// Answers a checked registration with Accepted; the registry's entry for it.
fn accept(
    r: &Registration,
    peer: SocketAddr,
    stream: &TcpStream,
    expect: &Expect,
) -> Result<(Registered, TcpStream), Refusal> {
    let mac = expect
        .key
        .as_ref()
        .map(|k| auth::answer_in(ROOT_DOMAIN, k, &r.nonce));
    let root_ip = stream.local_addr()?.ip();
    Connection::new(stream).send(&ToRank::Accepted { mac })?;
    let entry = Registered {
        rank: r.rank,
        host: clean_name(&r.host),
        agent: SocketAddr::new(peer.ip(), r.port),
        key: r.key.clone().filter(|_| expect.key.is_none()),
        root_ip,
    };
    Ok((entry, stream.try_clone()?))
}

/// Says Alive to every registered rank each [`HEARTBEAT`] until `stop`.
fn heartbeats(registry: Arc<Mutex<Registry>>, stop: Arc<AtomicBool>) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("fathom-launch-beat".into())
        .spawn(move || {
            let mut next = Instant::now() + HEARTBEAT;
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(TICK.max(Duration::from_millis(50)));
                if Instant::now() < next {
                    continue;
                }
                next += HEARTBEAT;
                for (_, stream) in lock(&registry).ranks.iter().flatten() {
                    let _ = Connection::new(stream).send(&ToRank::Alive);
                }
            }
        })
}

fn lock(m: &Mutex<Registry>) -> std::sync::MutexGuard<'_, Registry> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
