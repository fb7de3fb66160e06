//! A non-zero rank's side: reach rank 0 (retrying until it listens), start the agent, register
//! it, then wait for the test's exit code while rank 0 keeps saying it is alive.

use super::error::{JoinError, NotRank0};
use super::wire::{
    exchange_preambles, recv, Registration, ToRank, HANDSHAKE, RANK_DOMAIN, ROOT_DOMAIN, SILENCE,
};
use fathom_proto::{auth, Connection, FrameError};
use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long a rank waits between attempts to reach rank 0.
const RETRY: Duration = Duration::from_millis(200);

/// What a rank registers, and how.
pub struct Joining<'a> {
    /// Rank 0's rendezvous address as given (for messages), e.g. `node01:5300`.
    pub root: &'a str,
    /// This rank.
    pub rank: u32,
    /// The number of processes.
    pub size: u32,
    /// The launch's id (empty if the launcher gave none).
    pub launch: &'a str,
    /// This rank's host name.
    pub host: &'a str,
    /// The pre-shared key, if any; without one the agent gets a random key of its own.
    pub key: Option<&'a [u8]>,
    /// How long to keep trying to reach rank 0 and register.
    pub timeout: Duration,
}

/// A registered rank, waiting for the exit code.
pub struct Joined {
    conn: Connection<TcpStream>,
    root: String,
}

/// Reaches rank 0 at the addresses `resolve` gives (asked again at every attempt, since rank 0's
/// name may not resolve yet), retrying until `j.timeout`; then starts the agent with
/// `start_agent(address rank 0 was reached from, the agent's key)`, which answers the agent's
/// port (or why it did not start), and registers it.
pub fn join<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    j: &Joining,
    resolve: impl Fn() -> io::Result<Vec<SocketAddr>>,
    start_agent: impl FnOnce(IpAddr, &[u8]) -> Result<u16, E>,
) -> Result<Joined, JoinError> {
    let deadline = Instant::now() + j.timeout;
    let (mut conn, nonce, key_required) = reach(j, &resolve, deadline)?;
    let root = || j.root.to_string();
    let lost = |source: FrameError| JoinError::Lost {
        root: root(),
        source,
    };
    let stream = conn.get_ref();
    let _ = stream.set_read_timeout(Some(HANDSHAKE));
    let here = stream.local_addr().map_err(JoinError::Local)?.ip();
    if key_required != j.key.is_some() {
        return Err(JoinError::KeyMismatch {
            root: root(),
            rank0_has_key: key_required,
        });
    }
    let own: [u8; 32] = auth::random();
    let agent_key = j.key.unwrap_or(&own);
    let port = start_agent(here, agent_key).map_err(|e| JoinError::Agent(e.into()))?;
    let mine = auth::nonce();
    conn.send(&Registration {
        rank: j.rank,
        size: j.size,
        launch: j.launch.to_string(),
        host: j.host.to_string(),
        port,
        key: j.key.is_none().then(|| own.to_vec()),
        mac: j.key.map(|k| auth::answer_in(RANK_DOMAIN, k, &nonce)),
        nonce: mine,
    })
    .map_err(lost)?;
    match recv::<ToRank, _>(&mut conn).map_err(lost)? {
        ToRank::Accepted { mac } => {
            if let Some(k) = j.key {
                if !mac.is_some_and(|m| auth::verify_in(ROOT_DOMAIN, k, &mine, &m)) {
                    return Err(JoinError::NoProof(root()));
                }
            }
        }
        ToRank::Refused { message } => return Err(JoinError::Refused(message)),
        other => {
            return Err(JoinError::Unexpected {
                root: root(),
                message: format!("{other:?}"),
            })
        }
    }
    Ok(Joined {
        conn,
        root: j.root.to_string(),
    })
}

/// Connects to rank 0 and reads its challenge, retrying (connection refused, or closed before
/// the challenge) until `deadline`.
fn reach(
    j: &Joining,
    resolve: &impl Fn() -> io::Result<Vec<SocketAddr>>,
    deadline: Instant,
) -> Result<(Connection<TcpStream>, [u8; 32], bool), JoinError> {
    let mut last = String::from("no attempt");
    loop {
        match resolve() {
            Ok(addrs) => {
                for a in addrs {
                    match attempt(a, deadline) {
                        Ok(Attempt::Reached(c, nonce, key)) => return Ok((c, nonce, key)),
                        Ok(Attempt::Retry(e)) => last = format!("{a}: {e}"),
                        Err(reason) => {
                            return Err(JoinError::NotRank0 {
                                root: j.root.to_string(),
                                addr: a,
                                reason,
                            })
                        }
                    }
                }
            }
            Err(e) => last = format!("cannot resolve: {e}"),
        }
        if Instant::now() + RETRY >= deadline {
            return Err(JoinError::NoAnswer {
                root: j.root.to_string(),
                secs: j.timeout.as_secs_f64(),
                last,
            });
        }
        std::thread::sleep(RETRY);
    }
}

/// One attempt's outcome: rank 0's challenge, or a reason to try again.
enum Attempt {
    Reached(Connection<TcpStream>, [u8; 32], bool),
    Retry(String),
}

/// One attempt to reach rank 0 at `a`; an error is final (not rank 0, another version).
fn attempt(a: SocketAddr, deadline: Instant) -> Result<Attempt, NotRank0> {
    let left = deadline.saturating_duration_since(Instant::now());
    let mut stream = match TcpStream::connect_timeout(&a, left.clamp(RETRY, HANDSHAKE)) {
        Ok(s) => s,
        Err(e) => return Ok(Attempt::Retry(e.to_string())),
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(HANDSHAKE));
    match exchange_preambles(&mut stream) {
        Err(FrameError::Io(e)) => return Ok(Attempt::Retry(e.to_string())),
        Err(e) => return Err(e.into()),
        Ok(()) => {}
    }
    let mut conn = Connection::new(stream);
    match recv::<ToRank, _>(&mut conn) {
        Ok(ToRank::Challenge {
            nonce,
            key_required,
        }) => Ok(Attempt::Reached(conn, nonce, key_required)),
        Ok(other) => Err(NotRank0::Unexpected(format!("{other:?}"))),
        Err(FrameError::Io(e)) => Ok(Attempt::Retry(e.to_string())),
        Err(e) => Err(e.into()),
    }
}

impl Joined {
    /// Waits for the test's exit code; an error when rank 0 closes without one or falls
    /// silent for [`SILENCE`].
    pub fn wait(mut self) -> Result<u8, JoinError> {
        let _ = self.conn.get_ref().set_read_timeout(Some(SILENCE));
        loop {
            match self.conn.recv::<ToRank>(fathom_proto::PRE_AUTH_FRAME) {
                Ok(Some(ToRank::Alive)) => {}
                Ok(Some(ToRank::Exit { code })) => return Ok(code),
                Ok(Some(other)) => {
                    return Err(JoinError::Unexpected {
                        root: self.root,
                        message: format!("{other:?}"),
                    })
                }
                Ok(None) => return Err(JoinError::Closed(self.root)),
                Err(FrameError::Io(e))
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(JoinError::Silent {
                        root: self.root,
                        secs: SILENCE.as_secs(),
                    })
                }
                Err(source) => {
                    return Err(JoinError::Gone {
                        root: self.root,
                        source,
                    })
                }
            }
        }
    }
}
