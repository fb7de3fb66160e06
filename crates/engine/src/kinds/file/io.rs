//! The file kind's tools: buffers aligned for O_DIRECT, the streaming digest, full positional
//! reads, splice, mappings to hash the pages a receiver spliced into its own file, and the page-cache questions
//! (mincore, fadvise).

use fathom_proto::file::{Verify, DIRECT_ALIGN};
use sha2::Digest as _;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::FileExt;

/// A zeroed buffer whose start is aligned for O_DIRECT, allocated once per flow.
pub(super) struct Aligned {
    mem: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    /// `len` usable bytes.
    pub(super) fn new(len: usize) -> Aligned {
        let align = DIRECT_ALIGN as usize;
        let mem = vec![0u8; len + align];
        let start = mem.as_ptr().align_offset(align).min(align);
        Aligned { mem, start, len }
    }

    /// The usable bytes.
    pub(super) fn get(&self) -> &[u8] {
        &self.mem[self.start..self.start + self.len]
    }

    /// The usable bytes, to fill.
    pub(super) fn get_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + self.len]
    }
}

/// A running end-to-end checksum.
pub(super) enum Digest {
    /// XXH3-64 (AVX2 or SSE2, as the CPU has, chosen at run time).
    Xxh3(Box<twox_hash::XxHash3_64>),
    /// SHA-256.
    Sha256(Box<sha2::Sha256>),
}

impl Digest {
    /// A fresh digest of kind `v`.
    pub(super) fn new(v: Verify) -> Digest {
        match v {
            Verify::Xxh3 => Digest::Xxh3(Box::default()),
            Verify::Sha256 => Digest::Sha256(Box::default()),
        }
    }

    /// Adds `b`.
    pub(super) fn update(&mut self, b: &[u8]) {
        match self {
            Digest::Xxh3(h) => std::hash::Hasher::write(h.as_mut(), b),
            Digest::Sha256(h) => h.update(b),
        }
    }

    /// The digest's bytes as they travel.
    pub(super) fn bytes(&self) -> Vec<u8> {
        match self {
            Digest::Xxh3(h) => std::hash::Hasher::finish(h.as_ref()).to_le_bytes().to_vec(),
            Digest::Sha256(h) => h.as_ref().clone().finalize().to_vec(),
        }
    }
}

/// Reads from `off` until `buf` is full or the file ends; the bytes read.
pub(super) fn read_full(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// splice(2) from `from` (at `*from_off` when given) to `to` (at `*to_off` when given), without
/// waiting on the pipe.
pub(super) fn splice(
    from: RawFd,
    from_off: Option<&mut i64>,
    to: RawFd,
    to_off: Option<&mut i64>,
    len: usize,
) -> io::Result<usize> {
    let ptr = |o: Option<&mut i64>| o.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: both descriptors are open; each offset is null or points at a live i64.
    let n = unsafe {
        libc::splice(
            from,
            ptr(from_off),
            to,
            ptr(to_off),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A pipe for splice: (read end, write end).
pub(super) fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    use std::os::fd::FromRawFd;
    // SAFETY: pipe2 returned two new descriptors that nothing else owns.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// A read-only shared mapping of a file's range, unmapped when dropped.
pub(super) struct Mapping {
    base: *mut libc::c_void,
    span: usize,
    /// Where the range starts in the mapping (the mapping starts on a page).
    skip: usize,
    len: usize,
}

impl Mapping {
    /// Maps `file`'s bytes `off..off+len` (`len` > 0); `populate` faults them all in at once
    /// (reading them from disk if they are not in the page cache).
    pub(super) fn new(file: &File, off: u64, len: usize, populate: bool) -> io::Result<Mapping> {
        let page = 4096u64;
        let start = off / page * page;
        let skip = (off - start) as usize;
        let span = skip + len;
        let flags = libc::MAP_SHARED | if populate { libc::MAP_POPULATE } else { 0 };
        // SAFETY: a fresh read-only shared mapping of an open file; unmapped on drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ,
                flags,
                file.as_raw_fd(),
                start as libc::off_t,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            base,
            span,
            skip,
            len,
        })
    }

    /// The range's bytes. The file must stay at least as long as the range while they are
    /// read (a page past its end raises SIGBUS): callers map only bytes they wrote themselves,
    /// into a copy's temporary file that no one else can reach (never a source, which another
    /// process may truncate at any time).
    pub(super) fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping holds `span` = `skip` + `len` readable bytes until dropped.
        unsafe { std::slice::from_raw_parts((self.base as *const u8).add(self.skip), self.len) }
    }

    /// Pages of the mapping in the page cache now (mincore).
    fn resident(&self) -> io::Result<u64> {
        let mut vec = vec![0u8; self.span.div_ceil(4096)];
        // SAFETY: the mapping spans `span` bytes; `vec` has one byte per page of it.
        if unsafe { libc::mincore(self.base, self.span, vec.as_mut_ptr()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(vec.iter().filter(|&&b| b & 1 == 1).count() as u64)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base` and `span` are the mapping made in `new`.
        unsafe { libc::munmap(self.base, self.span) };
    }
}

/// Hashes `file`'s bytes `off..off+len` into `digest` through a mapping, without copying them;
/// the file must hold them (see [`Mapping::bytes`]).
pub(super) fn hash_mapped(
    file: &File,
    off: u64,
    len: usize,
    digest: &mut Digest,
) -> io::Result<()> {
    if len > 0 {
        digest.update(Mapping::new(file, off, len, true)?.bytes());
    }
    Ok(())
}

/// Bytes of `file`'s range `off..off+len` in the page cache now.
pub(super) fn cached(file: &File, off: u64, len: u64) -> io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let pages = Mapping::new(file, off, len, false)?.resident()?;
    Ok((pages * 4096).min(len as u64))
}

/// Makes a splice pipe hold `bytes` (up to what the system allows; a smaller pipe only means
/// more system calls).
pub(super) fn size_pipe(w: &std::os::fd::OwnedFd, bytes: usize) {
    let want = bytes.clamp(4096, 1 << 20) as libc::c_int;
    // SAFETY: the descriptor is an open pipe; F_SETPIPE_SZ takes an int.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, want) };
}

/// Asks the kernel to drop `file`'s clean pages from the page cache.
pub(super) fn drop_cache(file: &File) -> io::Result<()> {
    // SAFETY: the descriptor is open; fadvise only advises.
    match unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}
