//! Reading the small files an operator names (keys, certificates): regular files only, read up
//! to a cap. `/dev/zero` as `--cert` grew the agent by 1 GB/s, and a FIFO would block its start.

use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Largest key or certificate file read: a PEM chain of a dozen certificates is under 64 KiB.
pub const MAX_SMALL_FILE: u64 = 1 << 20;

/// The bytes of the regular file `path`, an error if it is anything else or over `cap` bytes.
pub fn read_small(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    // Non-blocking, so that opening a FIFO with no writer returns at once; the type is checked
    // before anything is read.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file (a {})", describe(kind)),
        ));
    }
    let mut bytes = Vec::new();
    Read::take(file, cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than {} KiB; a key or certificate is smaller",
                cap >> 10
            ),
        ));
    }
    Ok(bytes)
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "directory"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_fifos_are_refused_before_any_read() {
        let e = read_small(Path::new("/dev/zero"), MAX_SMALL_FILE).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device)");
        let dir = std::env::temp_dir().join(format!("fathom-small-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_small(&fifo, MAX_SMALL_FILE).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_and_one_under_it_read() {
        let dir = std::env::temp_dir().join(format!("fathom-small-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; 4097]).unwrap();
        let over = read_small(&big, 4096).unwrap_err().to_string();
        let under = read_small(&big, 8192).map(|b| b.len());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(over, "larger than 4 KiB; a key or certificate is smaller");
        assert_eq!(under.unwrap(), 4097);
    }
}
