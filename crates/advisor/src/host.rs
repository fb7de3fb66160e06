//! Rules on the host: CPU frequency governor, deep idle states, NUMA and the open-files limits.

use crate::buffers::on;
use crate::{Confidence, Finding, Settings, Severity};

/// Idle states that take longer than this (µs) to leave add to every wake-up's latency.
pub const IDLE_LATENCY_MAX: u64 = 100;
/// Below this many open files, many-flow tests run out of descriptors.
pub const NOFILE_MIN: u64 = 65_536;

/// The findings on the host.
pub fn findings(s: &Settings) -> Vec<Finding> {
    let mut out = Vec::new();
    governor(s, &mut out);
    let deep: Vec<_> = s
        .idle_states
        .iter()
        .filter(|i| !i.disabled && i.latency_us > IDLE_LATENCY_MAX)
        .collect();
    if let Some(worst) = deep.iter().max_by_key(|i| i.latency_us) {
        let names: Vec<&str> = deep.iter().map(|i| i.name.as_str()).collect();
        let src = "/sys/devices/system/cpu/cpu0/cpuidle";
        out.push(Finding {
            why: format!(
                "an idle CPU may sleep in states that take up to {} µs to wake: a request/response test pays it on every transaction that finds the CPU asleep",
                worst.latency_us
            ),
            change: format!("cpupower idle-set -D {IDLE_LATENCY_MAX}   (disables the states slower than {IDLE_LATENCY_MAX} µs)"),
            ..on(
                src,
                format!("{} ({} µs to leave)", names.join(", "), worst.latency_us),
                "idle_states",
                Severity::Note,
                Confidence::Low,
            )
        });
    }
    if s.numa_nodes > 1 {
        out.push(Finding {
            why: "several NUMA nodes: a flow whose thread runs on the node away from the NIC crosses the interconnect for every byte".into(),
            change: "cat /sys/class/net/IFACE/device/numa_node, then pin the test to that node's CPUs with --cpus".into(),
            ..on(
                "/sys/devices/system/node",
                s.numa_nodes.to_string(),
                "numa",
                Severity::Note,
                Confidence::Low,
            )
        });
    }
    limits(s, &mut out);
    out
}

/// CPUs whose frequency governor is powersave.
fn governor(s: &Settings, out: &mut Vec<Finding>) {
    let slow: Vec<usize> = s
        .governors
        .iter()
        .filter(|(_, g)| g.as_str() == "powersave")
        .map(|(&c, _)| c)
        .collect();
    let Some(first) = slow.first() else { return };
    let src = format!("/sys/devices/system/cpu/cpu{first}/cpufreq/scaling_governor");
    out.push(Finding {
        why: "the powersave governor keeps clocks low, so per-packet work (and a CPU-bound stream) runs slower; with intel_pstate it still scales, less eagerly".into(),
        change: "cpupower frequency-set -g performance".into(),
        ..on(
            &src,
            format!("powersave on {} of {} CPUs", slow.len(), s.governors.len()),
            "governor",
            Severity::Warning,
            Confidence::Medium,
        )
    });
}

/// The open-files limits: the process's hard limit and fs.nr_open.
fn limits(s: &Settings, out: &mut Vec<Finding>) {
    if let Some((_, hard)) = s.nofile.filter(|&(_, h)| h < NOFILE_MIN) {
        out.push(Finding {
            why: format!(
                "a process may open at most {hard} files: a test with many flows needs a descriptor per flow on each end, so about {} flows at most",
                hard.saturating_sub(64)
            ),
            change: format!("ulimit -Hn {NOFILE_MIN}   (or nofile in /etc/security/limits.conf, LimitNOFILE= for a service)"),
            ..on(
                "RLIMIT_NOFILE (ulimit -Hn)",
                hard.to_string(),
                "nofile",
                Severity::Warning,
                Confidence::Medium,
            )
        });
    }
    let name = "fs.nr_open";
    if let Some(v) = s.number(name).filter(|&v| v < NOFILE_MIN) {
        out.push(Finding {
            why: format!(
                "no process may raise its open-files limit above {v}, whatever ulimit says"
            ),
            change: format!("sysctl -w {name}=1048576"),
            ..on(
                name,
                v.to_string(),
                "nr_open",
                Severity::Warning,
                Confidence::Medium,
            )
        });
    }
}
