//! Stale temporary files: where a filesystem has no unnamed files, a copy whose agent was killed
//! leaves its locked-away `.fathom-….part` file (never a file under the target's name). An agent
//! starting on a files root removes those no writer holds, and nothing else: only regular files
//! whose name follows that pattern exactly, found without following symlinks, whose lock it can
//! take (a writer holds its file's lock as long as the file is open, whatever its process or PID
//! namespace), each unlinked from its directory opened beneath the root.

use super::place;
use super::temp::{is_named_temp, try_lock};
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Directories below the root visited at most, so that a huge tree cannot hold up a start.
const MAX_DIRS: usize = 100_000;

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
            let ours = kind.is_file() && is_named_temp(name.as_bytes());
            if ours && unlink_if_unheld(&root_fd, &rel, &name).is_ok_and(|gone| gone) {
                removed.push(rel.join(&name));
            }
        }
    }
    Ok(removed)
}

/// Unlinks the regular file `name` of the directory `rel` below the root if no writer holds
/// its lock; Ok(true) when it did. `rel` is resolved beneath the root (a directory swapped for a
/// symlink meanwhile cannot lead out of it), and the name must still be the file locked.
fn unlink_if_unheld(
    root: &std::os::fd::OwnedFd,
    rel: &Path,
    name: &std::ffi::OsStr,
) -> io::Result<bool> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let dir = place::beneath(root, rel, libc::O_PATH | libc::O_DIRECTORY, 0, "")?;
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let file = std::fs::File::from(place::beneath(&dir, Path::new(name), flags, 0, "")?);
    let held = file.metadata()?;
    if !held.is_file() || !try_lock(file.as_raw_fd(), libc::F_RDLCK)? {
        return Ok(false);
    }
    let c =
        CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let same =
        place::entry(&dir, &c).is_ok_and(|st| st.st_ino == held.ino() && st.st_dev == held.dev());
    if !same {
        return Ok(false);
    }
    // SAFETY: `c` is a valid C string; `dir` is an open directory descriptor.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::place;
    use super::super::temp::Temp;
    use super::remove_stale_parts;

    #[test]
    fn only_unheld_temporary_files_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let dir = place::open_root(root.path()).unwrap();
        let held = Temp::create_named(&dir, libc::O_RDWR).unwrap();
        let stale = Temp::create_named(&dir, libc::O_RDWR).unwrap();
        let stale_name = stale.name.clone().unwrap();
        drop(stale);
        let name = |c: &std::ffi::CString| c.to_str().unwrap().to_string();
        std::fs::write(root.path().join(".fathom-x.part"), b"x").unwrap();
        let gone = remove_stale_parts(root.path()).unwrap();
        assert_eq!(gone, [std::path::PathBuf::from(name(&stale_name))]);
        assert!(root.path().join(name(held.name.as_ref().unwrap())).exists());
        assert!(
            root.path().join(".fathom-x.part").exists(),
            "off the pattern"
        );
    }
}
