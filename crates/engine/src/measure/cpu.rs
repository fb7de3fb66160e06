//! CPU accounting: /proc/stat per CPU, and the process's rusage.

use fathom_proto::sample::CpuTicks;

/// Per-CPU times from /proc/stat (the `cpuN` lines, in order).
pub fn proc_stat() -> Vec<CpuTicks> {
    std::fs::read_to_string("/proc/stat")
        .map(|s| parse_proc_stat(&s))
        .unwrap_or_default()
}

/// Parses the `cpuN` lines of /proc/stat.
pub fn parse_proc_stat(text: &str) -> Vec<CpuTicks> {
    text.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .map(|l| {
            let v: Vec<u64> = l
                .split_ascii_whitespace()
                .skip(1)
                .map(|x| x.parse().unwrap_or(0))
                .collect();
            let f = |i: usize| v.get(i).copied().unwrap_or(0);
            CpuTicks {
                user: f(0) + f(1),
                system: f(2),
                idle: f(3) + f(4),
                irq: f(5),
                softirq: f(6),
                steal: f(7),
            }
        })
        .collect()
}

/// The whole process's (user, system) CPU time in µs.
pub fn process_rusage_us() -> (u64, u64) {
    // SAFETY: rusage is plain data, getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

/// Clock ticks per second (USER_HZ) for converting /proc/stat.
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as u64
    } else {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_lines_only() {
        let s = "cpu  10 1 5 100 2 3 4 1 0 0\ncpu0 4 0 2 50 1 1 2 0 0 0\ncpu1 6 1 3 50 1 2 2 1 0 0\nintr 5\n";
        let v = parse_proc_stat(s);
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[1],
            CpuTicks {
                user: 7,
                system: 3,
                idle: 51,
                irq: 2,
                softirq: 2,
                steal: 1
            }
        );
        assert_eq!(v[1].busy(), 15);
    }
}
