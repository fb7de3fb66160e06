//! The control stream during the handshake: one deadline for the whole handshake, so that a
//! peer dribbling a byte at a time cannot stretch it read by read.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// A control stream whose reads all end by one instant.
pub struct Deadline<'a> {
    stream: &'a TcpStream,
    until: Instant,
}

impl<'a> Deadline<'a> {
    /// `stream`, whose reads fail with `TimedOut` from `until` on.
    pub fn new(stream: &'a TcpStream, until: Instant) -> Self {
        Deadline { stream, until }
    }
}

impl Read for Deadline<'_> {
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
            super::session::HANDSHAKE.as_secs()
        ),
    )
}

impl Write for Deadline<'_> {
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
