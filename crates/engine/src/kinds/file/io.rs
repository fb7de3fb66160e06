//! The file kind's tools: buffers aligned for O_DIRECT, the streaming digest, full positional
//! reads, splice, and the page-cache questions (mincore, fadvise).

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
    /// XXH3-64.
    Xxh3(Box<xxhash_rust::xxh3::Xxh3>),
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
            Digest::Xxh3(h) => h.update(b),
            Digest::Sha256(h) => h.update(b),
        }
    }

    /// The digest's bytes as they travel.
    pub(super) fn bytes(&self) -> Vec<u8> {
        match self {
            Digest::Xxh3(h) => h.digest().to_le_bytes().to_vec(),
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

/// splice(2) from `from` (at `*off` when given) to `to`, without blocking.
pub(super) fn splice(
    from: RawFd,
    off: Option<&mut i64>,
    to: RawFd,
    len: usize,
) -> io::Result<usize> {
    let off = off.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: both descriptors are open; `off` is null or points at a live i64.
    let n = unsafe {
        libc::splice(
            from,
            off,
            to,
            std::ptr::null_mut(),
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

/// Bytes of `file`'s range `off..off+len` in the page cache now (mincore over a mapping).
pub(super) fn cached(file: &File, off: u64, len: u64) -> io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    let page = 4096u64;
    let start = off / page * page;
    let span = usize::try_from(off + len - start)
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a fresh read-only shared mapping of an open file; unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            start as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut vec = vec![0u8; span.div_ceil(page as usize)];
    // SAFETY: `p` maps `span` bytes; `vec` has one byte per page of it.
    let r = unsafe { libc::mincore(p, span, vec.as_mut_ptr()) };
    let e = io::Error::last_os_error();
    // SAFETY: `p` and `span` are the mapping made above.
    unsafe { libc::munmap(p, span) };
    if r < 0 {
        return Err(e);
    }
    let pages = vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
    Ok((pages * page).min(len))
}

/// Asks the kernel to drop `file`'s clean pages from the page cache.
pub(super) fn drop_cache(file: &File) -> io::Result<()> {
    // SAFETY: the descriptor is open; fadvise only advises.
    match unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}
