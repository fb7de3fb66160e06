//! The one reader of a host's settings: files below a root directory (`/` on a real host, a
//! fake tree in tests) and, on a real host, `ethtool -k`, `-g` and `-l`. Unreadable values are
//! left out, never guessed; the rules stay silent on what was not read.

use crate::ethtool;
use crate::settings::{sysctl_names, IdleState, Iface, Settings};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// The network interfaces below `root` (sys/class/net), loopback excluded, sorted.
pub fn interfaces(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(root.join("sys/class/net"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "lo")
        .collect();
    names.sort();
    names
}

/// The settings in the tree below `root`, for interface `only` or every interface; offloads and
/// the open-files limit are left for [`host`] (or the test) to fill.
pub fn tree(root: &Path, only: Option<&str>) -> Settings {
    let sysctls = sysctls(root, sysctl_names());
    let irqs = irqs(root);
    let ifaces = interfaces(root)
        .into_iter()
        .filter(|n| only.is_none_or(|o| o == n))
        .map(|n| iface(root, n, &irqs))
        .collect();
    let cpu = root.join("sys/devices/system/cpu");
    let governors = numbered(&cpu, "cpu")
        .into_iter()
        .filter_map(|n| {
            Some((
                n,
                text(&cpu.join(format!("cpu{n}/cpufreq/scaling_governor")))?,
            ))
        })
        .collect();
    Settings {
        sysctls,
        ifaces,
        cpus: online(&cpu),
        governors,
        idle_states: idle_states(&cpu.join("cpu0/cpuidle")),
        numa_nodes: numbered(&root.join("sys/devices/system/node"), "node").len(),
        nofile: None,
        ethtool: false,
    }
}

/// The sysctls `names` below `root` (proc/sys/NAME with dots as slashes) that could be read:
/// name -> value, whitespace collapsed.
pub fn sysctls<'a>(
    root: &Path,
    names: impl IntoIterator<Item = &'a str>,
) -> BTreeMap<String, String> {
    names
        .into_iter()
        .filter_map(|name| {
            let path = root.join("proc/sys").join(name.replace('.', "/"));
            Some((name.to_string(), text(&path)?))
        })
        .collect()
}

/// How long all the `ethtool` calls of one read may take together: an agent answers the
/// controller's settings request well within its step timeout (35 s) however many interfaces
/// its host has; the interfaces left when it is spent are marked unread.
pub const ETHTOOL_BUDGET: Duration = Duration::from_secs(15);

/// This host's settings for interface `only` (or all), with offloads, rings and channels from
/// `ethtool -k`, `-g` and `-l` when ethtool is installed (within [`ETHTOOL_BUDGET`]), and the
/// open-files limit `nofile` (soft, hard) the caller read.
pub fn host(only: Option<&str>, nofile: Option<(u64, u64)>) -> Settings {
    let mut s = tree(Path::new("/"), only);
    s.nofile = nofile;
    ethtool::read_all(&mut s.ifaces, ETHTOOL_BUDGET, &mut ethtool::output);
    s.ethtool = s.ifaces.iter().any(|i| i.offloads.is_some());
    s
}

/// Reads `path` as trimmed text with runs of whitespace made one space.
fn text(path: &Path) -> Option<String> {
    let t = fs::read_to_string(path).ok()?;
    Some(t.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The numbers N of the entries `PREFIX<N>` in `dir`, sorted.
fn numbered(dir: &Path, prefix: &str) -> Vec<usize> {
    let mut n: Vec<usize> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
        .collect();
    n.sort_unstable();
    n
}

/// CPUs online, from cpu/online ("0-3,6"), else the count of cpuN entries.
fn online(cpu: &Path) -> usize {
    let Some(list) = text(&cpu.join("online")) else {
        return numbered(cpu, "cpu").len();
    };
    list.split(',')
        .filter_map(|r| match r.split_once('-') {
            Some((a, b)) => Some(b.parse::<usize>().ok()? + 1 - a.parse::<usize>().ok()?),
            None => r.parse::<usize>().ok().map(|_| 1),
        })
        .sum()
}

/// The cpuidle states below `dir` (stateN/{name,latency,disable}).
fn idle_states(dir: &Path) -> Vec<IdleState> {
    numbered(dir, "state")
        .into_iter()
        .filter_map(|n| {
            let d = dir.join(format!("state{n}"));
            Some(IdleState {
                name: text(&d.join("name"))?,
                latency_us: text(&d.join("latency"))?.parse().ok()?,
                disabled: text(&d.join("disable")).is_some_and(|v| v == "1"),
            })
        })
        .collect()
}

/// The interrupts of /proc/interrupts (below `root`): (IRQ number, the device names after it).
fn irqs(root: &Path) -> Vec<(u32, String)> {
    let t = fs::read_to_string(root.join("proc/interrupts")).unwrap_or_default();
    t.lines()
        .filter_map(|l| {
            let (n, rest) = l.trim().split_once(':')?;
            Some((n.parse().ok()?, rest.split_whitespace().last()?.to_string()))
        })
        .collect()
}

/// Whether the interrupt named `device` belongs to interface `name` ("eth0", "eth0-TxRx-3").
fn names(device: &str, name: &str) -> bool {
    device == name
        || device
            .strip_prefix(name)
            .is_some_and(|r| r.starts_with(['-', '@']))
}

/// Interface `name` below `root`: MTU, receive and transmit queues, whether RPS and XPS are on,
/// its RFS flow entries, and the affinity of its interrupts among `irqs`.
fn iface(root: &Path, name: String, irqs: &[(u32, String)]) -> Iface {
    let dir = root.join("sys/class/net").join(&name);
    let queues = dir.join("queues");
    let rx: Vec<usize> = numbered(&queues, "rx-");
    let tx: Vec<usize> = numbered(&queues, "tx-");
    let any_cpu = |dir: &str, q: &usize, file: &str| {
        text(&queues.join(format!("{dir}-{q}/{file}")))
            .is_some_and(|m| m.chars().any(|c| c.is_ascii_hexdigit() && c != '0'))
    };
    let irqs = irqs
        .iter()
        .filter(|(_, d)| names(d, &name))
        .filter_map(|&(n, _)| {
            let cpus = text(&root.join(format!("proc/irq/{n}/smp_affinity_list")))?;
            Some((n, cpus))
        })
        .collect();
    let flow_cnt = rx
        .iter()
        .filter_map(|q| {
            text(&queues.join(format!("rx-{q}/rps_flow_cnt")))?
                .parse::<u64>()
                .ok()
        })
        .fold(0u64, u64::saturating_add);
    Iface {
        mtu: text(&dir.join("mtu")).and_then(|m| m.parse().ok()),
        rx_queues: rx.len(),
        rps: rx.iter().any(|q| any_cpu("rx", q, "rps_cpus")),
        irqs,
        offloads: None,
        tx_queues: tx.len(),
        xps: tx.iter().any(|q| any_cpu("tx", q, "xps_cpus")),
        rps_flow_cnt: flow_cnt,
        ring_rx: None,
        channels: None,
        ethtool_unread: false,
        name,
    }
}
