//! A timerfd in the worker's epoll set, so flow timers (open-loop schedules, UDP timeouts) fire
//! with microsecond precision; epoll_wait's own timeout is in whole milliseconds.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A one-shot CLOCK_MONOTONIC timer set to absolute instants.
pub struct TimerFd {
    fd: OwnedFd,
    armed: Option<u64>,
}

impl TimerFd {
    /// A new disarmed timer.
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall; returns a new descriptor or -1.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just created and is owned by nobody else.
        Ok(TimerFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed: None,
        })
    }

    /// Fires at `at` (monotonic ns); a no-op if already set to that instant.
    pub fn set(&mut self, at: u64) -> io::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at / 1_000_000_000) as libc::time_t,
                tv_nsec: (at % 1_000_000_000).max(1) as libc::c_long,
            },
        };
        // SAFETY: valid itimerspec; a null old value is allowed.
        if unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        } != 0
        {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(at);
        Ok(())
    }

    /// Consumes an expiry after the timer fired.
    pub fn clear(&mut self) {
        let mut n = 0u64;
        // SAFETY: reads 8 bytes into a u64; EAGAIN when nothing expired is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
        self.armed = None;
    }

    /// The descriptor, for registration.
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
