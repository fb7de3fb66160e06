//! How glibc copies memory in this process, chosen once at start for the TLS receiver's sake.
//!
//! rustls copies every decrypted record's plaintext (16 KB) into a buffer of its own. glibc's
//! `memcpy` does copies that size with `rep movsb`, which on AMD processors is several times
//! slower than its vector loop for some distances between source and destination (glibc bug
//! 30994, fixed in later glibc by not choosing `rep movsb` there). On a veth pair that one copy
//! took 29% of a TLS receiver's CPU, more than AES-GCM itself (bench/RESULTS.md, "TLS, fourth
//! session"). glibc reads its copy threshold only from the environment at start, so
//! [`prefer_vector_copies`] starts this program again with the threshold raised.

/// The `GLIBC_TUNABLES` entry that keeps `rep movsb` for copies of 4 MB and more only.
const TUNABLE: &str = "glibc.cpu.x86_rep_movsb_threshold=4194304";
/// The tunable's name: a setting of the user's is left as it is.
const TUNABLE_NAME: &str = "glibc.cpu.x86_rep_movsb_threshold";

/// On an AMD x86-64 processor with glibc, replaces this process (same PID, arguments and
/// environment) by the same program with glibc's `rep movsb` threshold raised to 4 MB, unless
/// `GLIBC_TUNABLES` already names that threshold. Call it first in `main`, before any thread
/// starts. Elsewhere, or if the program cannot be started again, it returns and nothing changes.
pub fn prefer_vector_copies() {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        let current = std::env::var_os("GLIBC_TUNABLES").unwrap_or_default();
        // A secure (setuid) start drops GLIBC_TUNABLES, so starting again would never end.
        // SAFETY: getauxval reads the process's auxiliary vector and takes no pointer.
        let secure = unsafe { libc::getauxval(libc::AT_SECURE) } != 0;
        if secure || !is_amd() || current.to_string_lossy().contains(TUNABLE_NAME) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        // Only returns if the exec failed; then this process goes on as it is.
        let _ = std::process::Command::new(exe)
            .arg0(arg0)
            .args(args)
            .env("GLIBC_TUNABLES", with_tunable(&current.to_string_lossy()))
            .exec();
    }
}

/// `GLIBC_TUNABLES` with [`TUNABLE`] added to what it held (entries are joined by ':').
fn with_tunable(current: &str) -> String {
    if current.is_empty() {
        TUNABLE.to_string()
    } else {
        format!("{current}:{TUNABLE}")
    }
}

/// True on a processor whose vendor string is "AuthenticAMD".
#[cfg(target_arch = "x86_64")]
fn is_amd() -> bool {
    let id = std::arch::x86_64::__cpuid(0);
    let vendor: Vec<u8> = [id.ebx, id.edx, id.ecx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    vendor == b"AuthenticAMD"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tunable_is_added_to_what_the_user_set() {
        assert_eq!(with_tunable(""), TUNABLE);
        assert_eq!(
            with_tunable("glibc.malloc.trim_threshold=1"),
            format!("glibc.malloc.trim_threshold=1:{TUNABLE}")
        );
        assert!(TUNABLE.starts_with(TUNABLE_NAME));
    }
}
