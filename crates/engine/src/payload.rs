//! What a worker writes: a payload buffer made once per worker, and the same bytes as an
//! in-memory file for the zero-copy senders (sendfile).

use std::io;
use std::os::fd::{OwnedFd, RawFd};

/// A payload buffer of pseudo-random bytes (so nothing on the path can compress it).
pub fn payload(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// An in-memory file holding `bytes`, for sendfile.
pub fn memfile(bytes: &[u8]) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: the name is a valid C string; a new descriptor is returned or -1.
    let fd: RawFd = unsafe { libc::memfd_create(c"fathom-payload".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nobody else.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    use std::io::Write;
    (&file).write_all(bytes)?;
    Ok(file.into())
}
