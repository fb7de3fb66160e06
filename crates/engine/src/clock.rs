//! CLOCK_MONOTONIC in nanoseconds: one clock for every timestamp inside a host.

/// Now, in ns of CLOCK_MONOTONIC.
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC).unwrap_or(0)
}

/// Now, in ns of CLOCK_REALTIME: the clock the kernel stamps received packets with.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME).unwrap_or(0)
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

/// Confines the calling thread to `cpus` (one CPU pins it). A CPU number at or above
/// CPU_SETSIZE is an error (`InvalidInput`), never a panic: callers run where a panic aborts.
pub fn confine_to(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if let Some(cpu) = cpus.iter().find(|c| **c as usize >= size) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is not below CPU_SETSIZE ({size})"),
        ));
    }
    // SAFETY: every index is below the set's size (checked above); valid pointer and size.
    unsafe {
        for &cpu in cpus {
            libc::CPU_SET(cpu as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs this process may run on (its affinity mask), ascending.
pub fn usable_cpus() -> Vec<u32> {
    // SAFETY: cpu_set_t is plain data.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer and size; on failure the set stays empty.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return Vec::new();
    }
    let size = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: every index is below the set's size.
    (0..size)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect()
}

/// The first CPU of `wanted` that this process may not run on, with the list it may use
/// ("0-1"), so that a placement is refused before a test starts rather than failing in it.
pub fn unusable_cpu(wanted: &[u32]) -> Option<(u32, String)> {
    let usable = usable_cpus();
    let bad = *wanted.iter().find(|c| !usable.contains(c))?;
    let list = match (usable.first(), usable.last()) {
        (Some(a), Some(b)) if (b - a) as usize + 1 == usable.len() && a != b => format!("{a}-{b}"),
        _ => usable
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
    };
    Some((bad, list))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cpus_this_process_runs_on_are_usable_and_one_beyond_them_is_not() {
        let here = super::usable_cpus();
        assert!(here.contains(&super::current_cpu()), "{here:?}");
        assert_eq!(super::unusable_cpu(&here), None);
        let beyond = here.last().unwrap() + 1;
        assert_eq!(super::unusable_cpu(&[beyond]).map(|u| u.0), Some(beyond));
    }

    /// D1: an affinity beyond CPU_SETSIZE is an error, not an abort.
    #[test]
    fn confining_to_a_cpu_beyond_the_set_size_is_an_error() {
        let e = super::confine_to(&[1024]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("CPU 1024"), "{e}");
    }
}
