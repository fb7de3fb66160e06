//! The file a copy writes: a temporary file beside the target, renamed into place once every
//! range arrived whole and matched its digest. A copy that fails or is stopped removes its
//! temporary file; one whose process is killed leaves only the hidden temporary name
//! (`.NAME.fathom-PID-N.part`), never a file under the target's name. An existing target is
//! replaced only when the plan says `force`, and only a regular file.

use super::place::{self, Base};
use fathom_proto::file::{FileOptions, MAX_FILE};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Distinguishes the temporary files of one process.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// The temporary name of a copy to `name` written by process `pid`: `.NAME.fathom-PID-N.part`.
fn temp_name(name: &str, pid: u32, serial: u64) -> String {
    format!(".{name}.fathom-{pid}-{serial}.part")
}

/// The process that wrote a temporary file named `name` ([`temp_name`]'s pattern), or `None`
/// when the name does not follow the pattern exactly.
pub(super) fn temp_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".part")?;
    let (target, ids) = rest.rsplit_once(".fathom-")?;
    let (pid, serial) = ids.split_once('-')?;
    let (pid, serial) = (pid.parse().ok()?, serial.parse().ok()?);
    // Written back, the name must come out the same: no sign, no leading zero, no empty target.
    (!target.is_empty() && temp_name(target, pid, serial) == name).then_some(pid)
}

/// The receiving end's file, shared by its flows.
pub(super) struct Target {
    dir: OwnedFd,
    name: CString,
    temp: CString,
    /// The temporary file being written.
    pub(super) file: File,
    shown: String,
    force: bool,
    fsync: bool,
    direct: bool,
    /// The file's size, as the senders' headers (or the plan) say.
    total: Mutex<Option<u64>>,
    /// Flows still writing.
    left: AtomicUsize,
    /// Bytes of ranges complete and verified.
    covered: AtomicU64,
    committed: Mutex<bool>,
}

fn c_name(p: &std::path::Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a file name"))
}

fn check(r: libc::c_int, what: &str) -> io::Result<()> {
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

/// Refuses an existing target that is not a regular file, or any existing one without force.
fn may_replace(dir: &OwnedFd, name: &CString, shown: &str, force: bool) -> io::Result<()> {
    // SAFETY: `st` is written by fstatat; `name` is a valid C string.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r < 0 {
        return match io::Error::last_os_error() {
            e if e.kind() == io::ErrorKind::NotFound => Ok(()),
            e => Err(io::Error::new(e.kind(), format!("{shown}: {e}"))),
        };
    }
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
        may_replace(&dir, &name, path, o.force)?;
        let temp = c_name(&PathBuf::from(temp_name(
            &name.to_string_lossy(),
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed),
        )))?;
        // Read as well as write: a spliced chunk is hashed through a mapping of the file.
        let flags = libc::O_RDWR
            | libc::O_CREAT
            | libc::O_EXCL
            | libc::O_NOFOLLOW
            | libc::O_CLOEXEC
            | if o.direct { libc::O_DIRECT } else { 0 };
        // SAFETY: `temp` is a valid C string; the mode is a plain integer.
        let fd =
            unsafe { libc::openat(dir.as_raw_fd(), temp.as_ptr(), flags, 0o644 as libc::c_uint) };
        check(fd, path)?;
        Ok(Target {
            dir,
            name,
            temp,
            // SAFETY: openat returned a new descriptor that nothing else owns.
            file: File::from(unsafe { OwnedFd::from_raw_fd(fd) }),
            shown: path.to_string(),
            force: o.force,
            fsync: o.fsync,
            direct: o.direct,
            total: Mutex::new(o.size),
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
        let mut known = self.total.lock().unwrap_or_else(|p| p.into_inner());
        match *known {
            Some(t) if t != total => bad(format!("the sender says {total} bytes; expected {t}")),
            _ => {
                *known = Some(total);
                Ok(())
            }
        }
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
        let total = self
            .total
            .lock()
            .unwrap_or_else(|p| p.into_inner())
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
        let flags = if self.force {
            0
        } else {
            libc::RENAME_NOREPLACE
        };
        let d = self.dir.as_raw_fd();
        // SAFETY: both names are valid C strings; the descriptors are open.
        let r = unsafe { libc::renameat2(d, self.temp.as_ptr(), d, self.name.as_ptr(), flags) };
        check(
            r,
            &format!("{}: cannot rename the copy into place", self.shown),
        )?;
        *self.committed.lock().unwrap_or_else(|p| p.into_inner()) = true;
        if self.fsync {
            // The directory handle is O_PATH, which fsync refuses: open it for reading.
            // SAFETY: "." is a valid C string; `d` is an open directory descriptor.
            let fd = unsafe {
                libc::openat(
                    d,
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
            // SAFETY: `temp` is a valid C string; the directory descriptor is open.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.temp.as_ptr(), 0) };
        }
    }
}
