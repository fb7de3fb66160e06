//! Checks that we may create and enter network namespaces before trying.

use crate::error::{Error, Result};

/// Capability bit: configure networks.
const CAP_NET_ADMIN: u32 = 12;

/// Capability bit: `setns`, mounting `/run/netns`.
const CAP_SYS_ADMIN: u32 = 21;

/// Fails with [`Error::NotPrivileged`] unless the process has CAP_NET_ADMIN and CAP_SYS_ADMIN.
pub fn require() -> Result<()> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if has_caps(&status, &[CAP_NET_ADMIN, CAP_SYS_ADMIN]) {
        Ok(())
    } else {
        Err(Error::NotPrivileged)
    }
}

/// Whether the `CapEff` line of a `/proc/PID/status` text has every bit in `caps`.
fn has_caps(status: &str, caps: &[u32]) -> bool {
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    caps.iter().all(|&c| effective & (1 << c) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_effective_capabilities() {
        let root = "Name:\tx\nCapEff:\t000001ffffffffff\n";
        let user = "Name:\tx\nCapEff:\t0000000000000000\n";
        let net_only = "CapEff:\t0000000000001000\n";
        assert!(has_caps(root, &[CAP_NET_ADMIN, CAP_SYS_ADMIN]));
        assert!(!has_caps(user, &[CAP_NET_ADMIN]));
        assert!(has_caps(net_only, &[CAP_NET_ADMIN]));
        assert!(!has_caps(net_only, &[CAP_NET_ADMIN, CAP_SYS_ADMIN]));
        assert!(!has_caps("", &[CAP_NET_ADMIN]));
    }
}
