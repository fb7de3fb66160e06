//! The file a copy writes: a temporary file beside the target, out of everyone else's reach
//! (see [`super::temp`]), put in place once ranges that tile the file exactly once arrived
//! whole and matched their digests. A copy that fails or is stopped leaves nothing; one whose
//! process is killed leaves at most a locked-away `.fathom-….part` file (only where the
//! filesystem has no unnamed files), never a file under the target's name. An existing target
//! is replaced only when the plan says `force`, and only a regular file; no copy may name a file
//! in the temporary namespace.

use super::place::{self, Base};
use super::temp::{is_temp_name, Temp};
use fathom_proto::file::{FileOptions, MAX_FILE};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The ranges admitted so far, and the file's size as the first header (or the plan) said.
#[derive(Default)]
struct Ranges {
    total: Option<u64>,
    /// (offset, length) of each non-empty range admitted; they never overlap.
    taken: Vec<(u64, u64)>,
}

/// The receiving end's file, shared by its flows.
pub(super) struct Target {
    dir: OwnedFd,
    name: CString,
    temp: Mutex<Temp>,
    /// The temporary file being written.
    pub(super) file: File,
    shown: String,
    force: bool,
    fsync: bool,
    direct: bool,
    /// The file's size and the ranges admitted.
    ranges: Mutex<Ranges>,
    /// Flows still writing.
    left: AtomicUsize,
    /// Bytes of ranges complete and verified.
    covered: AtomicU64,
    committed: Mutex<bool>,
}

/// A path as a C string.
fn c_name(p: &std::path::Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a file name"))
}

/// An error for a negative return, saying what failed.
fn check(r: libc::c_int, what: &str) -> io::Result<()> {
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

/// Refuses an existing target that is not a regular file, or any existing one without force.
fn may_replace(dir: &OwnedFd, name: &CString, shown: &str, force: bool) -> io::Result<()> {
    let st = match place::entry(dir, name) {
        Ok(st) => st,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{shown}: {e}"))),
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{shown}: exists and is not a regular file; refused"),
        ));
    }
    if !force {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{shown}: exists; pass --force to replace it"),
        ));
    }
    Ok(())
}

impl Target {
    /// Creates the temporary file for `path` (from `base`), written by `flows` flows.
    pub(super) fn create(
        base: Base<'_>,
        path: &str,
        o: &FileOptions,
        flows: usize,
    ) -> io::Result<Target> {
        let (dir, name) = place::target_dir(base, path)?;
        let name = c_name(&name)?;
        if is_temp_name(name.as_bytes()) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{path}: names of the form .fathom-*.part are kept for copies in progress; refused"),
            ));
        }
        may_replace(&dir, &name, path, o.force)?;
        let temp = Temp::create(&dir, if o.direct { libc::O_DIRECT } else { 0 })
            .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
        let file = temp.file.try_clone()?;
        Ok(Target {
            dir,
            name,
            temp: Mutex::new(temp),
            file,
            shown: path.to_string(),
            force: o.force,
            fsync: o.fsync,
            direct: o.direct,
            ranges: Mutex::new(Ranges {
                total: o.size,
                taken: Vec::new(),
            }),
            left: AtomicUsize::new(flows),
            covered: AtomicU64::new(0),
            committed: Mutex::new(false),
        })
    }

    /// Checks a range header against the file size known so far (the first header sets it).
    pub(super) fn admit(&self, offset: u64, len: u64, total: u64) -> io::Result<()> {
        let bad = |m: String| Err(io::Error::new(io::ErrorKind::InvalidData, m));
        if total > MAX_FILE || offset > total || len > total - offset {
            return bad(format!(
                "range {offset}+{len} of a {total}-byte file is out of bounds (files up to {MAX_FILE} bytes)"
            ));
        }
        let mut known = self.ranges.lock().unwrap_or_else(|p| p.into_inner());
        match known.total {
            Some(t) if t != total => {
                return bad(format!("the sender says {total} bytes; expected {t}"))
            }
            _ => known.total = Some(total),
        }
        let end = offset + len;
        if let Some(&(o, l)) = known
            .taken
            .iter()
            .find(|&&(o, l)| offset < o + l && o < end)
        {
            return bad(format!(
                "range {offset}+{len} overlaps range {o}+{l}, which another flow carries"
            ));
        }
        if len > 0 {
            known.taken.push((offset, len));
        }
        Ok(())
    }

    /// A flow finished its range (`len` bytes, verified or not). The last one commits: sizes
    /// the file, syncs it if asked, and renames it into place. Returns the time that took, ns.
    pub(super) fn done(&self, len: u64, verified: bool) -> io::Result<u64> {
        if verified {
            self.covered.fetch_add(len, Ordering::AcqRel);
        }
        if self.left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return Ok(0);
        }
        // Ranges never overlap (see `admit`), so verified bytes adding up to the size tile it.
        let total = self
            .ranges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .total
            .unwrap_or(0);
        let covered = self.covered.load(Ordering::Acquire);
        if covered != total {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: only {covered} of {total} bytes arrived whole and matched their checksum; nothing written under that name",
                    self.shown
                ),
            ));
        }
        let t = crate::clock::now_ns();
        if self.direct {
            self.file.set_len(total)?;
        }
        if self.fsync {
            self.file.sync_all()?;
        }
        let placed = self
            .temp
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .commit(&self.dir, &self.name, self.force);
        placed.map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => io::Error::new(
                e.kind(),
                format!("{}: exists; pass --force to replace it", self.shown),
            ),
            _ => io::Error::new(
                e.kind(),
                format!("{}: cannot put the copy in place: {e}", self.shown),
            ),
        })?;
        *self.committed.lock().unwrap_or_else(|p| p.into_inner()) = true;
        if self.fsync {
            // The directory handle is O_PATH, which fsync refuses: open it for reading.
            // SAFETY: "." is a valid C string; `d` is an open directory descriptor.
            let fd = unsafe {
                libc::openat(
                    self.dir.as_raw_fd(),
                    c".".as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            };
            check(fd, &self.shown)?;
            // SAFETY: openat returned a new descriptor that nothing else owns.
            File::from(unsafe { OwnedFd::from_raw_fd(fd) }).sync_all()?;
        }
        Ok(crate::clock::now_ns().saturating_sub(t))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if !*self.committed.lock().unwrap_or_else(|p| p.into_inner()) {
            let temp = self.temp.get_mut().unwrap_or_else(|p| p.into_inner());
            temp.discard(&self.dir);
        }
    }
}
