//! The sending end of one range: its header, its bytes (read and written, or sendfile, or
//! splice through a pipe), then its digest; it times its disk reads and its sends (waiting for
//! the socket included).

use super::io::{self as fio, Aligned, Digest};
use crate::kind::{Flow, Io, Step};
use crate::measure::counters::FlowStats;
use crate::tls::Wire;
use fathom_proto::file::{FileCounters, FileOptions, SendMode, DIRECT_ALIGN};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// Work done per run before yielding to the worker's other flows (and to its checks of the
/// time limit and of an abort): this many bytes, or this many sends, whichever comes first.
const BYTES_PER_TURN: u64 = 4 << 20;
const SENDS_PER_TURN: u32 = 4096;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Sending `out` (the header), then the data.
    Header,
    /// Sending the range.
    Data,
    /// Sending `out` (the digest), then closing.
    Trailer,
}

/// Sends one range of a file (or of generated data, when there is no file).
pub(super) struct Sender {
    sock: Wire,
    stats: Arc<FlowStats>,
    src: Option<Arc<File>>,
    mode: SendMode,
    direct: bool,
    phase: Phase,
    out: Vec<u8>,
    out_pos: usize,
    /// Next range byte to read, and the range's end.
    off: u64,
    end: u64,
    buf: Aligned,
    /// The chunk in hand: its length, how much of it went out, and where it starts in the
    /// source (the file, or the in-memory copy of the pattern for generated data).
    chunk: usize,
    pos: usize,
    chunk_src: u64,
    /// Bytes in the splice pipe.
    piped: usize,
    pipe: Option<(OwnedFd, OwnedFd)>,
    digest: Digest,
    c: FileCounters,
    sent: u64,
    waiting: Option<u64>,
    filled: bool,
    started: bool,
}

impl Sender {
    /// The range `off..off+len` of a `total`-byte source.
    pub(super) fn new(
        sock: Wire,
        stats: Arc<FlowStats>,
        src: Option<Arc<File>>,
        (off, len, total): (u64, u64, u64),
        o: &FileOptions,
    ) -> Sender {
        let mut out = Vec::with_capacity(fathom_proto::file::RANGE_HEADER);
        for v in [off, len, total] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        Sender {
            sock,
            stats,
            pipe: None,
            src,
            mode: o.send,
            direct: o.direct,
            phase: Phase::Header,
            out,
            out_pos: 0,
            off,
            end: off + len,
            buf: Aligned::new(o.io as usize),
            chunk: 0,
            pos: 0,
            chunk_src: 0,
            piped: 0,
            digest: Digest::new(o.verify),
            c: FileCounters::default(),
            sent: 0,
            waiting: None,
            filled: false,
            started: false,
        }
    }

    /// At the start: how much of the range is in the page cache, and the splice pipe.
    fn begin(&mut self) -> io::Result<()> {
        self.started = true;
        let len = self.end - self.off;
        self.c.cached_bytes = self
            .src
            .as_deref()
            .map(|f| fio::cached(f, self.off, len))
            .transpose()?;
        if self.mode == SendMode::Splice {
            let pipe = fio::pipe()?;
            fio::size_pipe(&pipe.1, self.buf.get().len());
            self.pipe = Some(pipe);
        }
        Ok(())
    }

    /// Takes the next chunk of the range in hand and hashes it. A file's chunk is read into the
    /// buffer and hashed from there in every mode (sendfile and splice then send it from the
    /// file): a source that shrinks meanwhile ends the copy with an error, where hashing its
    /// pages through a mapping would have raised SIGBUS. Generated data comes from the worker's
    /// payload, in chunks no longer than it (sendfile and splice send from its in-memory file).
    fn next_chunk(&mut self, io: &Io<'_>) -> io::Result<()> {
        let want = (self.end - self.off).min(self.buf.get().len() as u64) as usize;
        let want = match &self.src {
            Some(f) => {
                let t = crate::clock::now_ns();
                self.read_chunk(f.clone(), want)?;
                self.c.disk_ns += crate::clock::now_ns() - t;
                self.c.disk_bytes += want as u64;
                self.chunk_src = self.off;
                want
            }
            None => {
                let want = want.min(io.wbuf.len());
                if want == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "generated data needs a write size of at least 1 byte",
                    ));
                }
                if !self.filled {
                    let n = io.wbuf.len().min(self.buf.get().len());
                    self.buf.get_mut()[..n].copy_from_slice(&io.wbuf[..n]);
                    self.filled = true;
                }
                self.digest.update(&self.buf.get()[..want]);
                self.chunk_src = 0;
                want
            }
        };
        self.off += want as u64;
        self.chunk = want;
        self.pos = 0;
        Ok(())
    }

    /// The error of a source file that ended at byte `at`, before the range did.
    fn ended(at: u64) -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the source file ended at byte {at} while being sent"),
        )
    }

    /// Reads `want` bytes of the file at the range's next byte into the buffer, and hashes them.
    fn read_chunk(&mut self, f: Arc<File>, want: usize) -> io::Result<()> {
        let ask = match self.direct {
            true => want.next_multiple_of(DIRECT_ALIGN as usize),
            false => want,
        };
        let got = fio::read_full(&f, &mut self.buf.get_mut()[..ask], self.off)?;
        if got < want {
            return Err(Self::ended(self.off + got as u64));
        }
        self.digest.update(&self.buf.get()[..want]);
        Ok(())
    }

    /// The descriptor sendfile and splice read from.
    fn source_fd(&self, io: &Io<'_>) -> io::Result<RawFd> {
        match &self.src {
            Some(f) => Ok(f.as_raw_fd()),
            None => io
                .zc_file
                .ok_or_else(|| io::Error::other("no in-memory source for sendfile")),
        }
    }

    /// One send of the chunk in hand, as the mode says.
    fn send_chunk(&mut self, io: &Io<'_>) -> io::Result<usize> {
        let sock = self.sock.as_raw_fd();
        match self.mode {
            SendMode::Copy => self.sock.write(&self.buf.get()[self.pos..self.chunk]),
            SendMode::Sendfile => {
                let mut at = (self.chunk_src + self.pos as u64) as libc::off_t;
                // SAFETY: both descriptors are open; `at` is a valid pointer.
                let n = unsafe {
                    libc::sendfile(sock, self.source_fd(io)?, &mut at, self.chunk - self.pos)
                };
                match n {
                    n if n < 0 => Err(io::Error::last_os_error()),
                    // Nothing left to send from where the chunk was read: the source shrank.
                    0 => Err(Self::ended(at as u64)),
                    n => Ok(n as usize),
                }
            }
            SendMode::Splice => {
                let (r, w) = self
                    .pipe
                    .as_ref()
                    .map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd()))
                    .ok_or_else(|| io::Error::other("no pipe"))?;
                let left = self.chunk - self.pos - self.piped;
                if left > 0 {
                    let mut at = (self.chunk_src + (self.pos + self.piped) as u64) as i64;
                    match fio::splice(self.source_fd(io)?, Some(&mut at), w, None, left) {
                        Ok(n) => self.piped += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                if self.piped == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the source file ended while being sent",
                    ));
                }
                let n = fio::splice(r, None, sock, None, self.piped)?;
                self.piped -= n;
                Ok(n)
            }
        }
    }

    /// Sends what is in hand for the phase; Ok(false) when the socket is full.
    fn push(&mut self, io: &Io<'_>) -> io::Result<bool> {
        let t = crate::clock::now_ns();
        let r = match self.phase {
            Phase::Data => self.send_chunk(io),
            Phase::Header | Phase::Trailer => self.sock.write(&self.out[self.out_pos..]),
        };
        let now = crate::clock::now_ns();
        self.c.net_ns += now - t;
        match r {
            Ok(n) if self.phase == Phase::Data => {
                self.pos += n;
                self.sent += n as u64;
                self.stats.set_sent(self.sent);
                self.stats.touch(now);
            }
            Ok(n) => self.out_pos += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.waiting = Some(now);
                return Ok(false);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        self.stats.publish(&self.c);
        Ok(true)
    }

    /// Moves to the next phase when this one's bytes are out; Ok(true) once all is sent.
    fn advance(&mut self, io: &Io<'_>) -> io::Result<bool> {
        match self.phase {
            Phase::Header | Phase::Trailer if self.out_pos < self.out.len() => Ok(false),
            Phase::Header => {
                self.phase = Phase::Data;
                Ok(false)
            }
            Phase::Data if self.pos < self.chunk => Ok(false),
            Phase::Data if self.off < self.end => self.next_chunk(io).map(|_| false),
            Phase::Data => {
                self.out = self.digest.bytes();
                self.out_pos = 0;
                self.phase = Phase::Trailer;
                Ok(false)
            }
            Phase::Trailer => Ok(true),
        }
    }
}

impl Flow for Sender {
    fn register(&mut self, r: &mio::Registry, t: mio::Token) -> io::Result<()> {
        r.register(self.sock.socket(), t, mio::Interest::WRITABLE)
    }

    fn run(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        if !self.started {
            self.begin()?;
        }
        if let Some(since) = self.waiting.take() {
            self.c.net_ns += crate::clock::now_ns().saturating_sub(since);
        }
        let start = self.sent;
        let mut sends = 0u32;
        loop {
            if self.advance(io)? {
                self.stats.publish(&self.c);
                return Ok(if self.sock.close()? {
                    Step::Done
                } else {
                    Step::Wait
                });
            }
            if self.sent - start >= BYTES_PER_TURN || sends >= SENDS_PER_TURN {
                return Ok(Step::Again);
            }
            sends += 1;
            let more_to_send = match self.phase {
                Phase::Data => self.pos < self.chunk,
                _ => self.out_pos < self.out.len(),
            };
            if more_to_send && !self.push(io)? {
                return Ok(Step::Wait);
            }
        }
    }

    fn stop(&mut self, io: &mut Io<'_>) -> io::Result<Step> {
        self.run(io)
    }
}
