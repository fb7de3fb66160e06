//! Writing to stdout: every command's results and the live interval lines go through here.

use std::io::Write;

/// Writes to stdout, ignoring a reader that went away (`| head`).
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|_| out.flush());
}
