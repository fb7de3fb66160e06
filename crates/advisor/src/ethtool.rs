//! `ethtool`, run with a deadline, and the parsers of what `ethtool -k` (offloads), `-g` (rings)
//! and `-l` (channels) print. Without ethtool, or where a driver does not tell, the values stay
//! unknown.

use crate::settings::{Iface, Offloads};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one `ethtool` may take.
pub const DEADLINE: Duration = Duration::from_secs(5);

/// What `ethtool ARGS` prints on stdout; `None` when ethtool is missing, fails or takes over
/// `deadline` (killed then).
pub fn output(args: &[&str], deadline: Duration) -> Option<String> {
    let mut child = Command::new("ethtool")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let end = Instant::now() + deadline;
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

/// Runs `ethtool -k`, `-g` and `-l` on each of `ifaces` in turn through `run` (ARGS and the
/// longest the call may take: [`DEADLINE`], or less when less of `budget` is left), and fills
/// their offloads, ring and channels. Once `budget` is spent, the interfaces left are marked
/// [`Iface::ethtool_unread`] and not run on, so the whole read ends within `budget`.
pub fn read_all(
    ifaces: &mut [Iface],
    budget: Duration,
    run: &mut dyn FnMut(&[&str], Duration) -> Option<String>,
) {
    let end = Instant::now() + budget;
    let mut call = |args: &[&str]| {
        let left = end.saturating_duration_since(Instant::now());
        (!left.is_zero())
            .then(|| run(args, left.min(DEADLINE)))
            .flatten()
    };
    for i in ifaces {
        if Instant::now() >= end {
            i.ethtool_unread = true;
            continue;
        }
        let name = i.name.clone();
        i.offloads = call(&["-k", &name]).map(|o| parse_ethtool_k(&o));
        i.ring_rx = call(&["-g", &name]).and_then(|o| parse_rings(&o));
        i.channels = call(&["-l", &name]).and_then(|o| parse_channels(&o));
    }
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

/// The features of `ethtool -k`'s output ("generic-receive-offload: on [fixed]").
pub fn parse_ethtool_k(out: &str) -> Offloads {
    out.lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(": ")?;
            let on = rest.starts_with("on");
            (on || rest.starts_with("off"))
                .then(|| (name.to_string(), (on, rest.contains("[fixed]"))))
        })
        .collect()
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

    /// Interfaces named eth0..eth`n`, as the sysfs part of a read leaves them.
    fn ifaces(n: usize) -> Vec<Iface> {
        (0..n)
            .map(|k| Iface {
                name: format!("eth{k}"),
                ..Iface::default()
            })
            .collect()
    }

    #[test]
    fn a_hanging_ethtool_spends_the_budget_once_and_the_rest_are_unread() {
        let mut all = ifaces(40);
        let mut calls = 0;
        let budget = Duration::from_millis(300);
        let started = Instant::now();
        read_all(&mut all, budget, &mut |_, deadline| {
            calls += 1;
            assert!(deadline <= budget, "no call may outlast the budget");
            std::thread::sleep(deadline);
            None
        });
        let took = started.elapsed();
        assert!(took < budget + Duration::from_millis(200), "{took:?}");
        assert_eq!(
            calls, 1,
            "the first call takes what is left, so no other runs"
        );
        assert!(!all[0].ethtool_unread);
        assert!(all[1..].iter().all(|i| i.ethtool_unread));
    }

    #[test]
    fn slow_calls_read_the_interfaces_in_order_until_the_budget_is_spent() {
        let mut all = ifaces(100);
        read_all(&mut all, Duration::from_millis(200), &mut |args, _| {
            std::thread::sleep(Duration::from_millis(10));
            (args[0] == "-g").then(|| RINGS.to_string())
        });
        let read = all.iter().filter(|i| !i.ethtool_unread).count();
        assert!((1..100).contains(&read), "{read} of 100 read");
        assert!(all[..read - 1]
            .iter()
            .all(|i| i.ring_rx == Some((256, 4096))));
        assert!(all[read..]
            .iter()
            .all(|i| i.ethtool_unread && i.ring_rx.is_none()));
    }

    #[test]
    fn the_unread_interfaces_are_named_in_a_note() {
        let mut s = crate::Settings {
            ifaces: ifaces(3),
            ethtool: true,
            ..crate::Settings::default()
        };
        s.ifaces[2].ethtool_unread = true;
        let f = crate::findings(&s);
        let note = f
            .iter()
            .find(|f| f.id == "offloads_unknown")
            .expect("a note");
        assert!(note.why.contains("eth2"), "{}", note.why);
        assert!(!note.why.contains("eth1"), "{}", note.why);
        assert_eq!(
            note.change,
            "fathom doctor --iface eth2 (one interface at a time)"
        );
    }
}
