//! Host facts: name, kernel, CPUs, and the sysctls that limit socket buffers.

use fathom_proto::sample::{BufferLimits, HostInfo};

/// This host.
pub fn host_info() -> HostInfo {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpus: online_cpus(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        clock_ticks: super::cpu::ticks_per_second() as u32,
    }
}

/// CPUs online.
pub fn online_cpus() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// The socket buffer sysctls.
pub fn buffer_limits() -> BufferLimits {
    let one = |p: &str| read_nums(p).first().copied().unwrap_or(0);
    let three = |p: &str| {
        let v = read_nums(p);
        [0, 1, 2].map(|i| v.get(i).copied().unwrap_or(0))
    };
    BufferLimits {
        rmem_max: one("/proc/sys/net/core/rmem_max"),
        wmem_max: one("/proc/sys/net/core/wmem_max"),
        tcp_rmem: three("/proc/sys/net/ipv4/tcp_rmem"),
        tcp_wmem: three("/proc/sys/net/ipv4/tcp_wmem"),
    }
}

/// `uname -a`'s first fields (system, node, release, version, machine), joined by spaces;
/// empty when uname fails.
pub fn uname() -> String {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    [
        &u.sysname[..],
        &u.nodename,
        &u.release,
        &u.version,
        &u.machine,
    ]
    .iter()
    .map(|f| field(f))
    .collect::<Vec<_>>()
    .join(" ")
}

fn read_nums(path: &str) -> Vec<u64> {
    std::fs::read_to_string(path)
        .map(|s| {
            s.split_ascii_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Size of the first CPU's level-1 data cache, bytes, if the kernel says.
pub fn l1d_bytes() -> Option<u32> {
    let dir = "/sys/devices/system/cpu/cpu0/cache";
    (0..8).find_map(|i| {
        let read = |f: &str| {
            std::fs::read_to_string(format!("{dir}/index{i}/{f}"))
                .ok()
                .map(|s| s.trim().to_string())
        };
        if read("level")? != "1" || read("type")? != "Data" {
            return None;
        }
        let size = read("size")?;
        let k: u32 = size.strip_suffix('K')?.parse().ok()?;
        Some(k * 1024)
    })
}

/// The read size a stream receiver uses when none is asked for: one L1 data cache's worth
/// (copies into a buffer that stays in L1 measured fastest here; see bench/RESULTS.md),
/// between 16 KB and 128 KB.
pub fn default_read_size() -> u32 {
    l1d_bytes().unwrap_or(32 << 10).clamp(16 << 10, 128 << 10)
}

#[cfg(test)]
mod tests {
    #[test]
    fn uname_names_the_system_and_the_running_kernel() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let u = super::uname();
        assert!(u.starts_with("Linux "), "{u}");
        assert!(u.contains(release.trim()), "{u}");
    }
}
