//! Stale temporary files: a put whose agent was killed leaves its hidden `.NAME.fathom-PID-N.part`
//! file (never a file under the target's name). An agent starting on a files root removes those
//! of processes that no longer run, and nothing else: only regular files whose name follows that
//! pattern exactly, found without following symlinks, each unlinked from its directory opened
//! beneath the root.

use super::place;
use super::target::temp_writer;
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Directories below the root visited at most, so that a huge tree cannot hold up a start.
const MAX_DIRS: usize = 100_000;

/// True while a process `pid` exists (it may be another program that reused the number: then
/// its file is kept, which is the safe mistake).
fn running(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes the stale temporary files of interrupted copies below `root`; returns their paths
/// relative to the root. Directories that cannot be read are skipped.
pub fn remove_stale_parts(root: &Path) -> io::Result<Vec<PathBuf>> {
    let root_fd = place::open_root(root)?;
    let mut removed = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    let mut visited = 0;
    while let Some(rel) = dirs.pop() {
        visited += 1;
        if visited > MAX_DIRS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            if kind.is_dir() {
                dirs.push(rel.join(&name));
                continue;
            }
            let stale = name
                .to_str()
                .and_then(temp_writer)
                .is_some_and(|pid| !running(pid));
            if kind.is_file() && stale && unlink_beneath(&root_fd, &rel, &name).is_ok() {
                removed.push(rel.join(&name));
            }
        }
    }
    Ok(removed)
}

/// Unlinks the regular file `name` of the directory `rel` below the root, resolving `rel`
/// beneath the root (a directory swapped for a symlink meanwhile cannot lead out of it).
fn unlink_beneath(
    root: &std::os::fd::OwnedFd,
    rel: &Path,
    name: &std::ffi::OsStr,
) -> io::Result<()> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let dir = place::beneath(root, rel, libc::O_PATH | libc::O_DIRECTORY, 0, "")?;
    let c =
        CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid C string; `dir` is an open directory descriptor.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::target::temp_writer;

    #[test]
    fn only_the_exact_temporary_pattern_names_a_writer() {
        assert_eq!(temp_writer(".big.img.fathom-123-0.part"), Some(123));
        assert_eq!(temp_writer(".a.fathom-b.fathom-7-12.part"), Some(7));
        for other in [
            "big.img",
            ".big.img.part",
            ".big.img.fathom-.part",
            ".big.img.fathom-12.part",
            ".big.img.fathom-12-.part",
            ".big.img.fathom-x-1.part",
            ".big.img.fathom-1-2.part.bak",
            "..fathom-1-2.part",
            ".big.img.fathom-+1-2.part",
            ".big.img.fathom-99999999999-2.part",
        ] {
            assert_eq!(temp_writer(other), None, "{other}");
        }
    }
}
