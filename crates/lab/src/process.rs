//! What `/proc` says about a process: its state, parent, start time, command line and
//! executable.

use std::fs;

/// A process as `/proc/PID/stat` describes it.
pub struct Stat {
    /// One-letter state: `R`, `S`, `Z` (zombie), …
    pub state: char,
    /// Its parent's pid.
    pub ppid: u32,
    /// Start time after boot, in clock ticks; with the pid, it names one process for good.
    pub start_time: u64,
}

/// Reads `/proc/PID/stat`; `None` if the process is gone.
pub fn stat(pid: u32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    // `rest` starts at field 3 (state), then the parent (4); start time is field 22.
    let start_time = fields.nth(17)?.parse().ok()?;
    Some(Stat {
        state,
        ppid,
        start_time,
    })
}

/// Reads `/proc/PID/cmdline` as arguments; `None` if the process is gone.
pub fn cmdline(pid: u32) -> Option<Vec<String>> {
    let bytes = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(text.split_terminator('\0').map(str::to_string).collect())
}

/// The executable of `pid` (`/proc/PID/exe`); `None` if the process is gone.
pub fn exe(pid: u32) -> Option<std::path::PathBuf> {
    fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// Collects the exit status of `pid` if it is a child of ours that has exited, so it does not
/// linger as a zombie. Does nothing for other processes.
pub fn reap(pid: u32) {
    let Ok(pid @ 1..) = libc::pid_t::try_from(pid) else {
        return;
    };
    let mut status = 0;
    // SAFETY: WNOHANG never blocks; `status` is a valid out-pointer. A pid that is not our
    // child yields ECHILD, which we ignore.
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
}

/// Sends `signal` to `pid`; errors (the process is gone) are ignored.
pub fn signal(pid: u32, signal: libc::c_int) {
    let Ok(pid @ 1..) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill has no memory effects; the caller checked that `pid` is the process it means.
    unsafe { libc::kill(pid, signal) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_our_own_process() {
        let me = std::process::id();
        let s = stat(me).unwrap();
        assert!(s.start_time > 0);
        assert_ne!(s.state, 'Z');
        assert_eq!(s.ppid, std::os::unix::process::parent_id());
        assert!(!cmdline(me).unwrap().is_empty());
    }
}
