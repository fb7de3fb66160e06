//! The receiving end of one range: it reads and bounds the header, takes the bytes in I/O-sized
//! chunks, hashes and writes each at its offset, checks the sender's digest, and hands the range
//! to the [`Target`] (the last range commits the file). With read and write, a chunk is gathered
//! in a buffer, hashed, then written; with `--splice` (splice on both ends) the bytes go socket → pipe → file by splice, and each chunk is hashed where it landed in the
//! file's pages. It times its disk writes and its receives (waiting for data included).

use super::io::{self as fio, Aligned, Digest};
use super::target::Target;
use crate::kind::{Flow, Io, Step};
use crate::measure::counters::FlowStats;
use crate::tls::Wire;
use fathom_proto::file::{FileCounters, FileOptions, SendMode, DIRECT_ALIGN, RANGE_HEADER};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Work done per run before yielding to the worker's other flows.
const BYTES_PER_TURN: u64 = 4 << 20;

/// Receives one range of the target file.
pub(super) struct Receiver {
    sock: Wire,
    stats: Arc<FlowStats>,
    target: Arc<Target>,
    buf: Aligned,
    /// Bytes per chunk.
    io: usize,
    direct: bool,
    /// The splice pipe (read end, write end), when the bytes go socket → pipe → file.
    pipe: Option<(OwnedFd, OwnedFd)>,
    head: [u8; RANGE_HEADER],
    head_got: usize,
    /// The range (offset, length), once its header arrived.
    range: Option<(u64, u64)>,
    /// Data bytes received, and bytes of them in the buffer (not yet written).
    got: u64,
    fill: usize,
    trailer: Vec<u8>,
    trailer_got: usize,
    digest: Digest,
    c: FileCounters,
    waiting: Option<u64>,
}

impl Receiver {
    /// The splice pipe a receiver of `o` uses: one with `--splice`, none for read and write.
    /// (With `--sendfile`, the receiver reads and writes: splicing and hashing the landed pages
    /// cost more CPU than reading into a cache-hot buffer on a loaded 2-core loopback test.)
    pub(super) fn pipe(o: &FileOptions) -> io::Result<Option<(OwnedFd, OwnedFd)>> {
        if o.send != SendMode::Splice {
            return Ok(None);
        }
        let pipe = fio::pipe()?;
        fio::size_pipe(&pipe.1, o.io as usize);
        Ok(Some(pipe))
    }

    /// A receiver writing into `target`, through `pipe` (from [`Receiver::pipe`]) if given.
    pub(super) fn new(
        sock: Wire,
        stats: Arc<FlowStats>,
        target: Arc<Target>,
        pipe: Option<(OwnedFd, OwnedFd)>,
        o: &FileOptions,
    ) -> Receiver {
        Receiver {
            sock,
            stats,
            target,
            buf: Aligned::new(if pipe.is_some() { 0 } else { o.io as usize }),
            io: o.io as usize,
            direct: o.direct,
            pipe,
            head: [0; RANGE_HEADER],
            head_got: 0,
            range: None,
            got: 0,
            fill: 0,
            trailer: vec![0; o.verify.digest_len()],
            trailer_got: 0,
            digest: Digest::new(o.verify),
            c: FileCounters::default(),
            waiting: None,
        }
    }

    /// Reads from the socket into where the next bytes go: the header, the chunk (into the
    /// buffer, or the splice pipe), the digest, or (once all arrived) a scratch byte that must
    /// stay empty.
    fn read_some(&mut self) -> io::Result<usize> {
        if let (Some((_, len)), Some((_, w))) = (self.range, &self.pipe) {
            if self.got < len {
                let n = ((self.io - self.fill) as u64).min(len - self.got) as usize;
                return fio::splice(self.sock.as_raw_fd(), None, w.as_raw_fd(), None, n);
            }
        }
        let mut scratch = [0u8; 1];
        let Receiver {
            sock,
            head,
            buf,
            trailer,
            ..
        } = self;
        let space: &mut [u8] = match self.range {
            _ if self.c.verified.is_some() => &mut scratch,
            None => &mut head[self.head_got..],
            Some((_, len)) if self.got < len => {
                let room = (self.io - self.fill) as u64;
                let n = room.min(len - self.got) as usize;
                &mut buf.get_mut()[self.fill..self.fill + n]
            }
            Some(_) => &mut trailer[self.trailer_got..],
        };
        sock.read(space)
    }

    /// Takes in `n` bytes just read into [`Self::space`].
    fn took(&mut self, n: usize) -> io::Result<()> {
        let Some((off, len)) = self.range else {
            self.head_got += n;
            if self.head_got == RANGE_HEADER {
                let v = |i: usize| {
                    u64::from_le_bytes(self.head[i * 8..i * 8 + 8].try_into().unwrap_or_default())
                };
                let (off, len, total) = (v(0), v(1), v(2));
                self.target.admit(off, len, total)?;
                self.range = Some((off, len));
            }
            return Ok(());
        };
        if self.got < len {
            if self.pipe.is_some() {
                self.drain(n, off + self.got)?;
            }
            self.got += n as u64;
            self.fill += n;
            self.stats.set_received(self.got);
            if self.fill == self.io || self.got == len {
                let at = off + self.got - self.fill as u64;
                match self.pipe {
                    Some(_) => self.hash_landed(at)?,
                    None => self.write_chunk(at)?,
                }
            }
            return Ok(());
        }
        self.trailer_got += n;
        if self.trailer_got == self.trailer.len() {
            self.c.verified = Some(self.trailer == self.digest.bytes());
        }
        Ok(())
    }

    /// Splices the `n` bytes just taken into the pipe on to the file at `at`.
    fn drain(&mut self, n: usize, at: u64) -> io::Result<()> {
        let r = self.pipe.as_ref().map_or(-1, |(r, _)| r.as_raw_fd());
        let file = self.target.file.as_raw_fd();
        let t = crate::clock::now_ns();
        let mut done = 0;
        let mut res = Ok(());
        while done < n {
            let mut pos = (at + done as u64) as i64;
            match fio::splice(r, None, file, Some(&mut pos), n - done) {
                Ok(0) => res = Err(io::ErrorKind::WriteZero.into()),
                Ok(k) => {
                    done += k;
                    self.c.disk_bytes += k as u64;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => res = Err(self.write_error(e)),
            }
            break;
        }
        self.c.disk_ns += crate::clock::now_ns() - t;
        res
    }

    /// Hashes the chunk of `fill` bytes spliced into the file at `at`, where it lies.
    fn hash_landed(&mut self, at: u64) -> io::Result<()> {
        fio::hash_mapped(&self.target.file, at, self.fill, &mut self.digest)?;
        self.fill = 0;
        Ok(())
    }

    /// A write error as reported: a full disk says how much of the range was written.
    fn write_error(&self, e: io::Error) -> io::Error {
        match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => io::Error::new(
                io::ErrorKind::StorageFull,
                format!(
                    "disk full after {} bytes of this range were written: {e}",
                    self.c.disk_bytes
                ),
            ),
            _ => e,
        }
    }

    /// Hashes the buffered chunk and writes it at `at` (padded to the block size under
    /// O_DIRECT; the commit trims the file to its size).
    fn write_chunk(&mut self, at: u64) -> io::Result<()> {
        let fill = self.fill;
        self.digest.update(&self.buf.get()[..fill]);
        let len = match self.direct {
            true => {
                let padded = fill.next_multiple_of(DIRECT_ALIGN as usize);
                self.buf.get_mut()[fill..padded].fill(0);
                padded
            }
            false => fill,
        };
        let t = crate::clock::now_ns();
        let r = self.write_at(len, fill, at);
        self.c.disk_ns += crate::clock::now_ns() - t;
        r?;
        self.fill = 0;
        Ok(())
    }

    /// Writes the first `len` bytes of the buffer at `at`, counting the file's bytes (the first
    /// `fill`) as they land, so that a full disk is reported with what was written.
    fn write_at(&mut self, len: usize, fill: usize, at: u64) -> io::Result<()> {
        let mut done = 0;
        while done < len {
            match self
                .target
                .file
                .write_at(&self.buf.get()[done..len], at + done as u64)
            {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.c.disk_bytes += (done + n).min(fill).saturating_sub(done.min(fill)) as u64;
                    done += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.write_error(e)),
            }
        }
        Ok(())
    }

    /// The sender closed: the range must be whole, its digest read.
    fn finish(&mut self) -> io::Result<Step> {
        let (_, len) = self.range.unwrap_or((0, u64::MAX));
        if self.c.verified.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the sender closed after {} of {len} bytes of its range",
                    self.got
                ),
            ));
        }
        let ok = self.c.verified == Some(true);
        self.c.sync_ns = self.target.done(len, ok)?;
        self.stats.publish(&self.c);
        Ok(Step::Done)
    }
}

impl Flow for Receiver {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, mio::Interest::READABLE)
    }

    fn run(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        if let Some(since) = self.waiting.take() {
            self.c.net_ns += crate::clock::now_ns().saturating_sub(since);
        }
        let start = self.got;
        loop {
            if self.got - start >= BYTES_PER_TURN {
                return Ok(Step::Again);
            }
            let t = crate::clock::now_ns();
            let r = self.read_some();
            let now = crate::clock::now_ns();
            self.c.net_ns += now - t;
            match r {
                Ok(0) => return self.finish(),
                Ok(_) if self.c.verified.is_some() => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "the sender sent more than its range",
                    ))
                }
                Ok(n) => {
                    self.stats.touch(now);
                    self.took(n)?;
                    self.stats.publish(&self.c);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.waiting = Some(now);
                    return Ok(Step::Wait);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn stop(&mut self, _: &mut Io<'_>) -> io::Result<Step> {
        Ok(Step::Wait)
    }
}
