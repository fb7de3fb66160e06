//! Connections in the handshake: at most [`MAX_HANDSHAKES`] at once, the oldest cut off to make
//! room for a new one (so idle or dribbling strangers cannot keep a controller out unless they
//! open connections faster than it completes its handshake), each under one deadline for the
//! whole handshake, so that a peer dribbling a byte at a time cannot stretch it read by read.

use super::stream::ControlStream;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most connections in the handshake at once.
pub const MAX_HANDSHAKES: usize = 64;
/// The whole handshake (preamble, challenge, authentication) must complete within this.
pub const HANDSHAKE: Duration = Duration::from_secs(10);

/// Ends one connection's handshake from outside its thread.
type CutOff = Box<dyn FnOnce() + Send>;

/// The connections in the handshake, oldest first.
#[derive(Default)]
pub struct Handshakes {
    pending: Mutex<VecDeque<(u64, CutOff)>>,
}

impl Handshakes {
    /// Lets connection `id` into the handshake, first cutting off the oldest one in it when
    /// [`MAX_HANDSHAKES`] are; the pass leaves the handshake when dropped.
    pub fn enter<S: ControlStream>(set: &Arc<Handshakes>, id: u64, stream: &S) -> io::Result<Pass> {
        let clone = stream.try_clone()?;
        let cut_off: CutOff = Box::new(move || drop(clone.shutdown(Shutdown::Both)));
        let mut pending = set.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.len() >= MAX_HANDSHAKES {
            if let Some((_, cut_off)) = pending.pop_front() {
                cut_off();
            }
        }
        pending.push_back((id, cut_off));
        Ok(Pass {
            id,
            set: set.clone(),
        })
    }
}

/// A connection's place in the handshake.
pub struct Pass {
    id: u64,
    set: Arc<Handshakes>,
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut pending = self.set.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.retain(|(id, _)| *id != self.id);
    }
}

/// A control stream whose reads all end by one instant.
pub struct Deadline<S> {
    stream: S,
    until: Instant,
}

impl<S> Deadline<S> {
    /// `stream`, whose reads fail with `TimedOut` from `until` on.
    pub fn new(stream: S, until: Instant) -> Self {
        Deadline { stream, until }
    }
}

impl<S: ControlStream> Read for Deadline<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        self.stream.set_read_timeout(Some(left))?;
        match self.stream.read(buf) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(late())
            }
            r => r,
        }
    }
}

fn late() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "the handshake did not complete within {} s",
            HANDSHAKE.as_secs()
        ),
    )
}

impl<S: ControlStream> Write for Deadline<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// True when the peer left before completing its preamble: a readiness probe, not a refusal.
pub fn left_early(e: &fathom_proto::FrameError) -> bool {
    matches!(e, fathom_proto::FrameError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof)
}
