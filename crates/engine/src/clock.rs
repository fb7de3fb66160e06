//! CLOCK_MONOTONIC in nanoseconds: one clock for every timestamp inside a host.

/// Now, in ns of CLOCK_MONOTONIC.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns` (returns at once if it has passed).
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// CPU time consumed so far by the calling thread, ns.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// CPU time of another live thread of this process, ns; `None` once it has exited.
pub fn other_thread_cpu_ns(thread: libc::pthread_t) -> Option<u64> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: `thread` is a joinable thread of this process that has not been joined yet.
    if unsafe { libc::pthread_getcpuclockid(thread, &mut id) } != 0 {
        return None;
    }
    clock_ns(id)
}

fn clock_ns(id: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer; an invalid clock id yields an error, not UB.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> u32 {
    // SAFETY: no arguments; returns -1 only where unsupported.
    unsafe { libc::sched_getcpu() }.max(0) as u32
}

/// Confines the calling thread to `cpus` (one CPU pins it).
pub fn confine_to(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET bounds-checks against its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
