//! What `/proc` says about a process: its state, parent, start time, command line and
//! executable.

use std::fs;

/// A process as `/proc/PID/stat` describes it.
pub struct Stat {
    /// One-letter state: `R`, `S`, `Z` (zombie), …
    pub state: char,
    /// Its parent's pid.
    pub ppid: u32,
    /// CPU time all its threads have used, user and system, in clock ticks.
    pub cpu_ticks: u64,
    /// Start time after boot, in clock ticks; with the pid, it names one process for good.
    pub start_time: u64,
}

/// Reads `/proc/PID/stat`; `None` if the process is gone.
pub fn stat(pid: u32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    let (_, rest) = text.rsplit_once(')')?;
    // `rest` starts at field 3 (state): the parent is field 4, user and system time 14 and 15,
    // the start time 22.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: u32::try_from(field(4)?).ok()?,
        cpu_ticks: field(14)? + field(15)?,
        start_time: field(22)?,
    })
}

/// CPU time `pid` has used (all its threads, user and system), seconds; `None` if it is gone.
pub fn cpu_s(pid: u32) -> Option<f64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    stat(pid).map(|s| s.cpu_ticks as f64 / hz)
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

    /// CPU time this thread has used, seconds (CLOCK_THREAD_CPUTIME_ID).
    fn thread_cpu_s() -> f64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid out-pointer for the call's duration.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        assert_eq!(rc, 0, "clock_gettime: {}", std::io::Error::last_os_error());
        t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
    }

    #[test]
    fn counts_the_cpu_our_threads_used() {
        // Spin until this thread has used 100 ms of CPU (ten ticks at 100 Hz), however long
        // that takes on a loaded machine or under `nice -n 19`: a fixed wall-clock spin may get
        // less than one tick of CPU there. Bounded, so that it never hangs.
        let me = std::process::id();
        let before = cpu_s(me).unwrap();
        let start = thread_cpu_s();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut x = 0u64;
        while thread_cpu_s() - start < 0.1 {
            assert!(
                std::time::Instant::now() < deadline,
                "no 100 ms of CPU in 60 s"
            );
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        let after = cpu_s(me).unwrap();
        assert!(after > before, "{before} s, then {after} s after spinning");
    }
}
