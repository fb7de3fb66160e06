//! `ethtool`, run with a deadline, and the parsers of what `ethtool -g` (rings) and `ethtool -l`
//! (channels) print. Without ethtool, or where a driver does not tell, the values stay unknown.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one `ethtool` may take.
const DEADLINE: Duration = Duration::from_secs(5);

/// What `ethtool ARGS` prints on stdout; `None` when ethtool is missing, fails or takes over
/// [`DEADLINE`].
pub fn output(args: &[&str]) -> Option<String> {
    let mut child = Command::new("ethtool")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let end = Instant::now() + DEADLINE;
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => break,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The numeric field `name` ("RX", "Combined") of each section of `out`: (current, pre-set
/// maximum), the sections as `ethtool -g` and `-l` print them ("Pre-set maximums:", then
/// "Current hardware settings:"); `None` where either is missing or "n/a".
fn field(out: &str, name: &str) -> Option<(u64, u64)> {
    let mut max = None;
    let mut current = None;
    let mut in_current = false;
    for line in out.lines() {
        let line = line.trim();
        if line.starts_with("Pre-set maximums") {
            in_current = false;
        } else if line.starts_with("Current hardware settings") {
            in_current = true;
        } else if let Some((k, v)) = line.split_once(':') {
            if k.trim() == name {
                let v = v.trim().parse::<u64>().ok();
                match in_current {
                    true => current = current.or(v),
                    false => max = max.or(v),
                }
            }
        }
    }
    Some((current?, max?))
}

/// The RX ring of `ethtool -g`'s output: (current, maximum).
pub fn parse_rings(out: &str) -> Option<(u64, u64)> {
    field(out, "RX").filter(|&(_, max)| max > 0)
}

/// The receive channels of `ethtool -l`'s output: (current, maximum) of the combined ones, or
/// of the RX ones where the NIC has no combined channels.
pub fn parse_channels(out: &str) -> Option<(u64, u64)> {
    field(out, "Combined")
        .filter(|&(_, max)| max > 0)
        .or_else(|| field(out, "RX").filter(|&(_, max)| max > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RINGS: &str = "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\t4096\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t4096\nCurrent hardware settings:\nRX:\t\t256\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t256\nRX Buf Len:\tn/a\n";
    const CHANNELS: &str = "Channel parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\nCombined:\t8\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\nCombined:\t2\n";

    #[test]
    fn rings_and_channels_are_read_as_current_and_maximum() {
        assert_eq!(parse_rings(RINGS), Some((256, 4096)));
        assert_eq!(parse_channels(CHANNELS), Some((2, 8)));
        let rx_only = CHANNELS
            .replace(
                "RX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\nCombined:\t8",
                "RX:\t\t4\nCombined:\t0",
            )
            .replace(
                "RX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\nCombined:\t2",
                "RX:\t\t1\nCombined:\t0",
            );
        assert_eq!(parse_channels(&rx_only), Some((1, 4)));
    }

    #[test]
    fn a_driver_that_does_not_tell_gives_nothing() {
        assert_eq!(parse_rings("Ring parameters for veth0:\n"), None);
        let na = "Pre-set maximums:\nRX:\tn/a\nCurrent hardware settings:\nRX:\tn/a\n";
        assert_eq!(parse_rings(na), None);
        assert_eq!(parse_channels(na), None);
    }
}
