//! CPU accounting: /proc/stat per CPU, and the process's rusage.

use fathom_proto::sample::CpuTicks;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Per-CPU times from /proc/stat (the `cpuN` lines, in order).
pub fn proc_stat() -> Vec<CpuTicks> {
    std::fs::read_to_string("/proc/stat")
        .map(|s| parse_proc_stat(&s))
        .unwrap_or_default()
}

/// The most of /proc/stat's start [`ProcStat`] reads to find its `cpuN` lines (they come
/// first; a host with thousands of CPUs needs a few hundred KB).
const PROC_STAT_MAX: usize = 4 << 20;

/// /proc/stat kept open for a sampler that reads it at every snapshot: each reading is one
/// read from offset 0, which makes the kernel regenerate the file, of only its start (where
/// the `cpuN` lines are), into a buffer kept between readings, instead of a path lookup, an
/// open, reads of the whole file (its `intr` line runs to kilobytes) and a close. It opens
/// the file at its first reading, on the reading thread.
#[derive(Default)]
pub struct ProcStat {
    file: Option<File>,
    opened: bool,
    buf: Vec<u8>,
}

impl ProcStat {
    /// Per-CPU times now, as [`proc_stat`] gives them (none if /proc/stat cannot be opened).
    pub fn read(&mut self) -> Vec<CpuTicks> {
        if !self.opened {
            self.opened = true;
            self.file = File::open("/proc/stat").ok();
        }
        if self.buf.is_empty() {
            self.buf = vec![0; 16 << 10];
        }
        let Some(file) = &self.file else {
            return Vec::new();
        };
        loop {
            let mut len = 0;
            // One read usually holds the whole start; a short one is continued where it ended.
            while len < self.buf.len() {
                match file.read_at(&mut self.buf[len..], len as u64) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => len += n,
                }
                if cpu_lines_end(&self.buf[..len]).is_some() {
                    break;
                }
            }
            let end = cpu_lines_end(&self.buf[..len]);
            if end.is_some() || len < self.buf.len() || self.buf.len() >= PROC_STAT_MAX {
                let whole_lines = || self.buf[..len].iter().rposition(|&b| b == b'\n');
                let cut = match end {
                    Some(e) => e,
                    None if len < self.buf.len() => len,
                    None => whole_lines().map_or(0, |i| i + 1),
                };
                let text = &self.buf[..cut];
                return parse_proc_stat(std::str::from_utf8(text).unwrap_or_default());
            }
            // The cpu lines ran past the buffer: read again, from the start, into a larger one.
            self.buf.resize(self.buf.len() * 2, 0);
        }
    }
}

/// Where the leading `cpu` lines of /proc/stat's text end (the start of the first other
/// line), once that line's first three bytes are in.
fn cpu_lines_end(text: &[u8]) -> Option<usize> {
    let mut at = 0;
    while text.len() - at >= 3 {
        if !text[at..].starts_with(b"cpu") {
            return Some(at);
        }
        at += text[at..].iter().position(|&b| b == b'\n')? + 1;
    }
    None
}

/// Parses the `cpuN` lines of /proc/stat.
pub fn parse_proc_stat(text: &str) -> Vec<CpuTicks> {
    text.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .map(|l| {
            let mut v = [0u64; 8];
            for (slot, x) in v.iter_mut().zip(l.split_ascii_whitespace().skip(1)) {
                *slot = x.parse().unwrap_or(0);
            }
            CpuTicks {
                user: v[0] + v[1],
                system: v[2],
                idle: v[3] + v[4],
                irq: v[5],
                softirq: v[6],
                steal: v[7],
            }
        })
        .collect()
}

/// The whole process's (user, system) CPU time in µs.
pub fn process_rusage_us() -> (u64, u64) {
    rusage_us(libc::RUSAGE_SELF)
}

/// The calling thread's (user, system) CPU time in µs.
pub fn thread_rusage_us() -> (u64, u64) {
    rusage_us(libc::RUSAGE_THREAD)
}

/// getrusage's (user, system) CPU time of `who` in µs.
fn rusage_us(who: libc::c_int) -> (u64, u64) {
    // SAFETY: rusage is plain data, getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
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

    #[test]
    fn cpu_lines_end_at_the_first_other_line() {
        assert_eq!(cpu_lines_end(b"cpu  1\ncpu0 1\nintr 5"), Some(14));
        assert_eq!(
            cpu_lines_end(b"cpu  1\ncpu0 1\n"),
            None,
            "the next line has not begun"
        );
        assert_eq!(cpu_lines_end(b"cpu  1\ncpu0 1"), None);
        assert_eq!(
            cpu_lines_end(b"cpu  1\ncp"),
            None,
            "a cpu line may be cut short"
        );
    }

    #[test]
    fn a_thread_counts_its_own_cpu_time_within_the_process() {
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::black_box(t.elapsed());
        }
        let (tu, ts) = thread_rusage_us();
        let (pu, ps) = process_rusage_us();
        assert!(tu + ts > 0, "a busy thread used some CPU");
        assert!(tu + ts <= pu + ps, "a thread uses no more than its process");
    }

    #[test]
    fn the_open_file_reads_as_a_fresh_one_each_time() {
        let mut p = ProcStat::default();
        let first = p.read();
        assert_eq!(first.len(), proc_stat().len());
        assert!(!first.is_empty());
        // Busy this thread for a few ticks: a re-read must see the kernel's new figures.
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(50) {
            std::hint::black_box(t.elapsed());
        }
        let total = |v: &[CpuTicks]| v.iter().map(CpuTicks::total).sum::<u64>();
        assert!(total(&p.read()) > total(&first));
        let mut small = ProcStat {
            buf: vec![0; 8],
            ..ProcStat::default()
        };
        assert_eq!(small.read().len(), first.len(), "a buffer too small grows");
    }
}
