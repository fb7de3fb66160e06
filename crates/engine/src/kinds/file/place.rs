//! Where a copy's file lives, opened safely.
//!
//! On an agent every path stays below its files root: the path (relative, or absolute inside
//! the root) is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from the root, so
//! `..`, absolute symlinks and symlinks that climb out are refused by the kernel, and only
//! regular files are read or replaced. On the controller's own end the path is the user's, as
//! given.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Where a path is resolved from.
#[derive(Clone, Copy)]
pub(super) enum Base<'a> {
    /// An agent's files root: nothing outside it.
    Root(&'a Path),
    /// The user's own end: paths as given.
    Local,
}

/// The error a refused path gets.
fn refused(path: &str, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, format!("{path}: {why}"))
}

/// `path` relative to `root`: relative paths as they are, absolute ones only inside the root.
fn relative(root: &Path, path: &str) -> io::Result<PathBuf> {
    let p = Path::new(path);
    let rel = match p.strip_prefix(root) {
        Ok(r) => r,
        Err(_) if p.is_absolute() => {
            return Err(refused(
                path,
                &format!("outside the agent's files root {}", root.display()),
            ))
        }
        Err(_) => p,
    };
    Ok(if rel.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        rel.to_path_buf()
    })
}

/// openat2 below `dir` with `flags` and `mode`.
pub(super) fn beneath(
    dir: &OwnedFd,
    rel: &Path,
    flags: i32,
    mode: u32,
    shown: &str,
) -> io::Result<OwnedFd> {
    let c = CString::new(rel.as_os_str().as_bytes())
        .map_err(|_| refused(shown, "the path holds a NUL byte"))?;
    // SAFETY: open_how is plain integers; all-zero is its "nothing asked" value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = u64::from(mode);
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: `c` is a valid C string and `how` a valid open_how of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EXDEV) => refused(shown, "leaves the agent's files root"),
            Some(libc::ELOOP) => refused(shown, "a link that cannot be followed"),
            _ => io::Error::new(e.kind(), format!("{shown}: {e}")),
        });
    }
    // SAFETY: openat2 returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Opens a directory as a handle for the *at calls (O_PATH).
fn open_dir(base: Base<'_>, rel: &Path, shown: &str) -> io::Result<OwnedFd> {
    let flags = libc::O_PATH | libc::O_DIRECTORY;
    match base {
        Base::Root(root) => beneath(&open_root(root)?, rel, flags, 0, shown),
        Base::Local => {
            let c = CString::new(rel.as_os_str().as_bytes())
                .map_err(|_| refused(shown, "the path holds a NUL byte"))?;
            // SAFETY: `c` is a valid C string.
            let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
            if fd < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("{shown}: {e}")));
            }
            // SAFETY: open returned a new descriptor that nothing else owns.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    }
}

pub(super) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    File::open(root)
        .map(OwnedFd::from)
        .map_err(|e| io::Error::new(e.kind(), format!("files root {}: {e}", root.display())))
}

/// The path to resolve from `base`, and how to show it.
fn resolve(base: Base<'_>, path: &str) -> io::Result<PathBuf> {
    match base {
        Base::Root(root) => relative(root, path),
        Base::Local => Ok(PathBuf::from(path)),
    }
}

/// Opens the source of a copy for reading; it must be a regular file.
pub(super) fn open_source(base: Base<'_>, path: &str, direct: bool) -> io::Result<File> {
    let rel = resolve(base, path)?;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | if direct { libc::O_DIRECT } else { 0 };
    let file = match base {
        Base::Root(root) => File::from(beneath(&open_root(root)?, &rel, flags, 0, path)?),
        Base::Local => std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(&rel)
            .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?,
    };
    if !file.metadata()?.file_type().is_file() {
        return Err(refused(path, "not a regular file"));
    }
    // O_NONBLOCK kept a FIFO from blocking the open; regular files ignore it.
    Ok(file)
}

/// The directory holding `rel` and its last component, which must name a file.
pub(super) fn split(rel: &Path, shown: &str) -> io::Result<(PathBuf, PathBuf)> {
    match rel.components().next_back() {
        Some(Component::Normal(name)) => Ok((
            rel.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            PathBuf::from(name),
        )),
        _ => Err(refused(shown, "does not name a file")),
    }
}

/// The directory a copy's target goes into (opened), and the target's name in it.
pub(super) fn target_dir(base: Base<'_>, path: &str) -> io::Result<(OwnedFd, PathBuf)> {
    let rel = resolve(base, path)?;
    let (dir, name) = split(&rel, path)?;
    Ok((open_dir(base, &dir, path)?, name))
}

/// The entry `name` in the directory `dir` as it is, a symlink not followed (`fstatat` with
/// `AT_SYMLINK_NOFOLLOW`); the OS error when there is none.
pub(super) fn entry(dir: &impl AsRawFd, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: `st` is plain integers, written by fstatat; `name` is a valid C string and `dir`
    // an open descriptor.
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
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}
