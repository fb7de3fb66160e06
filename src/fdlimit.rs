//! The open-files limit (RLIMIT_NOFILE): every flow is a descriptor on each end, so thousands of
//! flows need thousands of them. fathom raises the limit itself as far as it may, checks a test
//! against it before opening anything, and names the limit when it stops a test.

use std::io;

/// Descriptors a process needs beyond its flows' (control connections, listeners, epoll sets,
/// timers, the store, the netlink socket).
pub const SPARE: u64 = 64;

/// The limit as this process sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The soft limit, which applies.
    pub soft: u64,
    /// The hard limit, the most the soft one may be raised to without privilege.
    pub hard: u64,
    /// fs.nr_open, the most any process may have (0 if unknown).
    pub nr_open: u64,
}

impl Limit {
    /// The limit now.
    pub fn now() -> Limit {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: valid pointer to an rlimit.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        Limit {
            soft: lim.rlim_cur,
            hard: lim.rlim_max,
            nr_open: nr_open(),
        }
    }

    /// Why `need` descriptors (for `what`) do not fit, or `None` when they do.
    pub fn refuse(&self, need: u64, what: &str) -> Option<String> {
        (need > self.soft).then(|| {
            format!(
                "{what} needs about {need} open files, but this process may open {} \
                 (RLIMIT_NOFILE): {}",
                self.soft,
                self.binding()
            )
        })
    }

    /// Which limit stops the soft one from rising, and what would lift it. The hard limit is
    /// named with its value whenever it is the one that binds; fs.nr_open only when the hard
    /// limit already reaches it (an unreadable fs.nr_open is never blamed).
    fn binding(&self) -> String {
        if self.soft < self.hard {
            format!("raise it with `ulimit -n {}`", self.hard)
        } else if self.nr_open == 0 || self.hard < self.nr_open {
            format!(
                "that is RLIMIT_NOFILE's hard limit ({}), which only a privileged user \
                 (CAP_SYS_RESOURCE) may raise",
                self.hard
            )
        } else {
            format!(
                "that is fs.nr_open ({}), the kernel's most per process (sysctl fs.nr_open)",
                self.nr_open
            )
        }
    }
}

/// Raises the soft open-files limit to the hard one, after raising the hard one to fs.nr_open
/// where this process may (as root with CAP_SYS_RESOURCE); failures leave the limit as it was.
pub fn raise() {
    let Limit {
        soft,
        hard,
        nr_open,
    } = Limit::now();
    if nr_open > hard && set(nr_open, nr_open).is_ok() {
        return;
    }
    if soft < hard {
        let _ = set(hard, hard);
    }
}

/// The error for an accept or socket call that failed for want of descriptors, naming the
/// limit; other errors pass through.
pub fn explain(e: io::Error, what: &str) -> io::Error {
    match e.raw_os_error() {
        Some(libc::EMFILE) => {
            let lim = Limit::now();
            let msg = format!(
                "{what} ran out of open files at {} (RLIMIT_NOFILE): {}",
                lim.soft,
                lim.binding()
            );
            io::Error::new(e.kind(), msg)
        }
        Some(libc::ENFILE) => io::Error::new(
            e.kind(),
            format!("{what}: the system's open-files table is full (sysctl fs.file-max): {e}"),
        ),
        _ => e,
    }
}

fn set(soft: u64, hard: u64) -> io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: valid pointer to an rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn nr_open() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: Limit = Limit {
        soft: 1024,
        hard: 4096,
        nr_open: 1 << 20,
    };

    #[test]
    fn what_fits_is_not_refused() {
        assert_eq!(LIM.refuse(1024, "x"), None);
    }

    #[test]
    fn a_soft_limit_says_how_to_raise_it() {
        let m = LIM.refuse(20_064, "-P 10000").unwrap();
        assert!(m.starts_with("-P 10000 needs about 20064 open files, but this process may open 1024 (RLIMIT_NOFILE)"), "{m}");
        assert!(m.contains("ulimit -n 4096"), "{m}");
    }

    #[test]
    fn a_hard_limit_names_the_privilege_and_the_kernels_limit() {
        let hard = Limit { soft: 4096, ..LIM };
        let m = hard.refuse(5000, "-P 2500").unwrap();
        assert!(
            m.ends_with(
                "that is RLIMIT_NOFILE's hard limit (4096), which only a privileged user \
                 (CAP_SYS_RESOURCE) may raise"
            ),
            "{m}"
        );
        let kernel = Limit {
            soft: 1 << 20,
            hard: 1 << 20,
            nr_open: 1 << 20,
        };
        let m = kernel.refuse(2 << 20, "-P 1048576").unwrap();
        assert!(m.contains("sysctl fs.nr_open"), "{m}");
    }

    /// Under EMFILE with a hard limit of 40 the agent blamed fs.nr_open: the hard limit binds
    /// (fs.nr_open unread or far above it), and is named with its value.
    #[test]
    fn a_hard_limit_of_40_is_named_not_fs_nr_open() {
        for nr_open in [0, 1 << 20] {
            let lim = Limit {
                soft: 40,
                hard: 40,
                nr_open,
            };
            let m = lim.refuse(41, "this agent").unwrap();
            assert!(m.contains("RLIMIT_NOFILE's hard limit (40)"), "{m}");
            assert!(!m.contains("nr_open"), "{m}");
        }
    }
}
