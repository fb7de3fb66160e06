//! A control connection held in memory, for the fuzz targets in `fuzz/` and their corpus
//! replay: what the peer sent is a fixed sequence of bytes, and what this end writes is
//! dropped. The agent's session and iperf3's server both read their control connection through
//! a trait of their own, which each implements for [`MemoryStream`] in its `fuzz` module.

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// A connection whose peer sent a fixed sequence of bytes and then closed. Clones share the
/// read position, as clones of a socket do.
#[derive(Clone)]
pub struct MemoryStream {
    shared: Arc<Mutex<Shared>>,
}

struct Shared {
    input: Vec<u8>,
    read: usize,
    shut: bool,
}

impl MemoryStream {
    /// A stream that yields `input`, then end of stream.
    pub fn new(input: &[u8]) -> Self {
        MemoryStream {
            shared: Arc::new(Mutex::new(Shared {
                input: input.to_vec(),
                read: 0,
                shut: false,
            })),
        }
    }

    /// Ends the connection for every clone: reads see end of stream, writes a broken pipe.
    pub fn shut(&self) {
        self.lock().shut = true;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Read for MemoryStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.lock();
        if s.shut {
            return Ok(0);
        }
        let rest = &s.input[s.read..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        s.read += n;
        Ok(n)
    }
}

impl Write for MemoryStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.lock().shut {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_read_position_and_shutting_ends_both() {
        let mut a = MemoryStream::new(b"abcdef");
        let mut b = a.clone();
        let mut buf = [0u8; 4];
        assert_eq!(a.read(&mut buf).unwrap(), 4);
        assert_eq!(b.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"ef");
        assert_eq!(b.read(&mut buf).unwrap(), 0);
        let mut c = MemoryStream::new(b"xyz");
        c.clone().shut();
        assert_eq!(c.read(&mut buf).unwrap(), 0);
        assert!(c.write(b"x").is_err());
    }
}
