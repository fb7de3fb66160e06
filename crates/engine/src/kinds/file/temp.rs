//! The temporary file a copy writes before it is put in place, out of everyone else's reach.
//!
//! Where the filesystem supports it the file has no name at all (O_TMPFILE): nothing can open,
//! replace or remove it by name, and it vanishes with its descriptor; the commit links it into
//! place. Elsewhere it gets a short unguessable name, `.fathom-` and 16 random hex digits and
//! `.part`, created exclusively and locked (an open file description lock, held as long as the
//! copy's descriptor is open): a cleanup removes only such files whose lock it can take, which
//! proves that no writer holds them, whatever process or PID namespace wrote them. No copy may
//! name a file in that namespace (see [`is_temp_name`]).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;

const PREFIX: &str = ".fathom-";
const SUFFIX: &str = ".part";
/// Random hex digits in a temporary name.
const DIGITS: usize = 16;
/// Attempts at a fresh name before giving up (a clash needs 2^64 luck, or a cleanup that took a
/// file between its creation and its lock).
const ATTEMPTS: usize = 8;

/// True for a name in the temporary namespace (`.fathom-…​.part`), which copies may not use.
pub(super) fn is_temp_name(name: &[u8]) -> bool {
    name.len() >= PREFIX.len() + SUFFIX.len()
        && name.starts_with(PREFIX.as_bytes())
        && name.ends_with(SUFFIX.as_bytes())
}

/// True for a name a temporary file was given: the prefix, exactly [`DIGITS`] lowercase hex
/// digits, the suffix.
pub(super) fn is_named_temp(name: &[u8]) -> bool {
    is_temp_name(name)
        && name.len() == PREFIX.len() + DIGITS + SUFFIX.len()
        && name[PREFIX.len()..PREFIX.len() + DIGITS]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// A fresh unguessable temporary name.
fn random_name() -> io::Result<CString> {
    let mut r = [0u8; DIGITS / 2];
    // SAFETY: `r` has room for the bytes asked.
    let n = unsafe { libc::getrandom(r.as_mut_ptr().cast(), r.len(), 0) };
    if n != r.len() as isize {
        return Err(io::Error::last_os_error());
    }
    let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
    Ok(CString::new(format!("{PREFIX}{hex}{SUFFIX}")).expect("no NUL in a hex name"))
}

/// F_OFD_SETLK of `kind` (F_RDLCK, F_WRLCK) over the whole file, without waiting; Ok(false)
/// when another open file description holds a conflicting lock.
pub(super) fn try_lock(fd: RawFd, kind: libc::c_int) -> io::Result<bool> {
    // SAFETY: flock is plain integers; all-zero with l_pid 0 is what OFD locks require.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = kind as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: `fd` is open; `l` is a valid flock.
    if unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &l) } == 0 {
        return Ok(true);
    }
    match io::Error::last_os_error() {
        e if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)) => Ok(false),
        e => Err(e),
    }
}

/// openat `name` (or the directory itself for O_TMPFILE) below `dir`.
fn open_at(dir: &OwnedFd, name: &CString, flags: libc::c_int) -> io::Result<File> {
    // SAFETY: `name` is a valid C string; the mode is a plain integer.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// A copy's temporary file in `dir`: its descriptor, and its name when it has one.
pub(super) struct Temp {
    /// The file, open for reading and writing.
    pub(super) file: File,
    /// The locked fallback name; none for an unnamed (O_TMPFILE) file.
    pub(super) name: Option<CString>,
}

impl Temp {
    /// Creates the temporary file in `dir`: unnamed where the filesystem can, else named and
    /// locked. `extra` adds open flags (O_DIRECT).
    pub(super) fn create(dir: &OwnedFd, extra: libc::c_int) -> io::Result<Temp> {
        let flags = libc::O_RDWR | extra;
        match open_at(dir, &CString::from(c"."), flags | libc::O_TMPFILE) {
            Ok(file) => {
                // Locked too, so that the name a forced commit links it under is never stale.
                try_lock(file.as_raw_fd(), libc::F_WRLCK)?;
                return Ok(Temp { file, name: None });
            }
            Err(e) if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
                return Err(e)
            }
            Err(_) => {}
        }
        Temp::create_named(dir, flags)
    }

    /// The fallback: a fresh name created exclusively, then locked; a file a cleanup took
    /// between the two (its lock is taken, or the name is gone) is given up for another.
    pub(super) fn create_named(dir: &OwnedFd, flags: libc::c_int) -> io::Result<Temp> {
        let flags = flags | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        for _ in 0..ATTEMPTS {
            let name = random_name()?;
            let file = match open_at(dir, &name, flags) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                other => other?,
            };
            if try_lock(file.as_raw_fd(), libc::F_WRLCK)? && file.metadata()?.nlink() > 0 {
                return Ok(Temp {
                    file,
                    name: Some(name),
                });
            }
        }
        Err(io::Error::other(
            "could not create a temporary file in the target's directory",
        ))
    }

    /// Gives the finished file the name `name` in `dir`; `replace` allows an existing file
    /// there to be replaced (else that is an error, AlreadyExists).
    pub(super) fn commit(
        &mut self,
        dir: &OwnedFd,
        name: &CString,
        replace: bool,
    ) -> io::Result<()> {
        let d = dir.as_raw_fd();
        if self.name.is_none() && !replace {
            return self.link(dir, name);
        }
        if self.name.is_none() {
            // An unnamed file cannot be linked over a file: link it under a fresh locked-away
            // name first (the lock stays with this descriptor), then rename that into place.
            let fresh = random_name()?;
            self.link(dir, &fresh)?;
            self.name = Some(fresh);
        }
        let from = self.name.as_ref().expect("named above");
        let flags = if replace { 0 } else { libc::RENAME_NOREPLACE };
        // SAFETY: both names are valid C strings; the descriptor is open.
        if unsafe { libc::renameat2(d, from.as_ptr(), d, name.as_ptr(), flags) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.name = None;
        Ok(())
    }

    /// Links the unnamed file as `name` in `dir` (never over an existing file).
    fn link(&self, dir: &OwnedFd, name: &CString) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        // SAFETY: the descriptors are open and the names valid C strings. AT_EMPTY_PATH needs
        // CAP_DAC_READ_SEARCH; without it, the descriptor's /proc link does the same.
        let r = unsafe {
            libc::linkat(
                fd,
                c"".as_ptr(),
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOENT) && e.raw_os_error() != Some(libc::EPERM) {
            return Err(e);
        }
        let proc = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in a number");
        // SAFETY: as above.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc.as_ptr(),
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes the named file of a copy that did not finish (an unnamed one goes with its
    /// descriptor).
    pub(super) fn discard(&mut self, dir: &OwnedFd) {
        if let Some(name) = self.name.take() {
            // SAFETY: `name` is a valid C string; the directory descriptor is open.
            unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_namespace_is_refused_and_names_follow_it_exactly() {
        let n = random_name().unwrap();
        assert!(is_named_temp(n.as_bytes()), "{n:?}");
        assert_eq!(n.as_bytes().len(), 29);
        assert!(is_temp_name(b".fathom-x.part"));
        for other in [
            &b".fathom-0123456789abcdeF.part"[..],
            b".fathom-0123456789abcde.part",
            b".big.fathom-12-0.part",
            b"fathom-0123456789abcdef.part",
        ] {
            assert!(!is_named_temp(other), "{}", String::from_utf8_lossy(other));
        }
    }
}
