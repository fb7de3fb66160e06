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
        let mut f = on(
            src,
            format!("{} ({} µs to leave)", names.join(", "), worst.latency_us),
            "idle_states",
            Severity::Note,
            Confidence::Low,
        );
        f.why = format!(
            "an idle CPU may sleep in states that take up to {} µs to wake: a request/response test pays it on every transaction that finds the CPU asleep",
            worst.latency_us
        );
        f.change = format!("cpupower idle-set -D {IDLE_LATENCY_MAX}   (disables the states slower than {IDLE_LATENCY_MAX} µs)");
        out.push(f);
    }
    if s.numa_nodes > 1 {
        let mut f = on(
            "/sys/devices/system/node",
            s.numa_nodes.to_string(),
            "numa",
            Severity::Note,
            Confidence::Low,
        );
        f.why = "several NUMA nodes: a flow whose thread runs on the node away from the NIC crosses the interconnect for every byte".into();
        f.change = "cat /sys/class/net/IFACE/device/numa_node, then pin the test to that node's CPUs with --cpus".into();
        out.push(f);
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
    let mut f = on(
        &src,
        format!("powersave on {} of {} CPUs", slow.len(), s.governors.len()),
        "governor",
        Severity::Warning,
        Confidence::Medium,
    );
    f.why = "the powersave governor keeps clocks low, so per-packet work (and a CPU-bound stream) runs slower; with intel_pstate it still scales, less eagerly".into();
    f.change = "cpupower frequency-set -g performance".into();
    out.push(f);
}

/// The open-files limits: the process's hard limit and fs.nr_open.
fn limits(s: &Settings, out: &mut Vec<Finding>) {
    if let Some((_, hard)) = s.nofile.filter(|&(_, h)| h < NOFILE_MIN) {
        let mut f = on(
            "RLIMIT_NOFILE (ulimit -Hn)",
            hard.to_string(),
            "nofile",
            Severity::Warning,
            Confidence::Medium,
        );
        f.why = format!(
            "a process may open at most {hard} files: a test with many flows needs a descriptor per flow on each end, so about {} flows at most",
            hard.saturating_sub(64)
        );
        f.change = format!("ulimit -Hn {NOFILE_MIN}   (or nofile in /etc/security/limits.conf, LimitNOFILE= for a service)");
        out.push(f);
    }
    let name = "fs.nr_open";
    if let Some(v) = s.number(name).filter(|&v| v < NOFILE_MIN) {
        let mut f = on(
            name,
            v.to_string(),
            "nr_open",
            Severity::Warning,
            Confidence::Medium,
        );
        f.why =
            format!("no process may raise its open-files limit above {v}, whatever ulimit says");
        f.change = format!("sysctl -w {name}=1048576");
        out.push(f);
    }
}
