//! The CPU cause: a receiving host's CPU that fathom's receiving threads read on was saturated.
//! Named by host and CPU number; when the receive buffer never reached net.ipv4.tcp_rmem's
//! maximum, the finding says that sysctl is not the cause (issue 26's wrong advice). The CPU and
//! the tests are the report warning's own (`warnings::bound`: `receiving_cpu`, `thread_share`,
//! `SATURATED_PCT`, `OURS_PCT`, `PINNED_PCT`): a CPU other work filled is not called fathom's
//! bound, and one that fathom's threads pinned there kept busy is.

use super::found::{pct, receiver_of, Found};
use crate::{Confidence, Settings, Severity};
use fathom_report::model::{CpuOne, HostResult, Report, ThreadResult};
use fathom_report::warnings::bound::{
    pinned_share, receiving_cpu, span_s, thread_share, OURS_PCT, PINNED_PCT, SATURATED_PCT,
};
use fathom_report::warnings::LIMITED_PCT;
use fathom_units::size;

/// The CPU findings of run `r`: one per receiving host whose reading CPU was saturated.
pub(super) fn findings(r: &Report, s: &Settings) -> Vec<Found> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for f in &r.flows {
        let Some(host) = receiver_of(r, f) else {
            continue;
        };
        if seen.contains(&host.name.as_str()) {
            continue;
        }
        seen.push(&host.name);
        out.extend(bound(r, host, s));
    }
    out
}

/// The CPU `host`'s workers read on when it was full with fathom's threads on it: saturated with
/// them pinned there or using at least [`OURS_PCT`] of it (the report warning's test), or kept
/// busy by threads pinned there ([`PINNED_PCT`]); and whether pinned.
pub(super) fn full_cpu<'a>(r: &Report, host: &'a HostResult) -> Option<(&'a CpuOne, bool)> {
    let cpu = receiving_cpu(host)?;
    let pinned = host
        .threads
        .iter()
        .any(|t| t.flows > 0 && t.pinned_cpu == Some(cpu.cpu));
    let on = |t: &ThreadResult| t.pinned_cpu.unwrap_or(t.last_cpu) == cpu.cpu;
    let saturated =
        cpu.total >= SATURATED_PCT && (pinned || thread_share(host, &on, span_s(r)) >= OURS_PCT);
    let kept = cpu.total >= PINNED_PCT && pinned_share(r, host, cpu.cpu) >= PINNED_PCT;
    (saturated || kept).then_some((cpu, pinned))
}

/// The finding for receiving host `host`, if the CPU its threads read on was saturated.
fn bound(r: &Report, host: &HostResult, s: &Settings) -> Option<Found> {
    let (cpu, pinned) = full_cpu(r, host)?;
    let limited = r.flows.iter().any(|f| f.rwnd_limited_pct > LIMITED_PCT);
    let shared = r.hosts.iter().all(|h| h.hostname == host.hostname);
    let mut figures = vec![
        ("cpu", f64::from(cpu.cpu)),
        ("cpu_busy_pct", cpu.total),
        ("cpu_user_pct", cpu.user),
        ("cpu_system_pct", cpu.system),
        ("cpu_softirq_pct", cpu.softirq),
        ("host_busy_pct", host.cpu.total),
        ("fathom_pinned_pct", pinned_share(r, host, cpu.cpu)),
    ];
    let buffer = r
        .flows
        .iter()
        .map(|f| u64::from(f.rcvbuf_end))
        .max()
        .unwrap_or(0);
    let max = s.triple("net.ipv4.tcp_rmem").map(|t| t[2]);
    let sysctl = match max {
        Some(m) if limited && r.test.rcvbuf.is_none() && buffer > 0 && buffer < m => {
            figures.push(("rcvbuf_end_bytes", buffer as f64));
            figures.push(("tcp_rmem_max_bytes", m as f64));
            format!(
                "; the receive buffer ended at {} of net.ipv4.tcp_rmem's {}: the window never reached autotuning's maximum, so that sysctl is not the cause and raising it changes nothing",
                size::human(buffer),
                size::human(m)
            )
        }
        _ => String::new(),
    };
    let place = match (pinned, shared) {
        (true, _) => "where its receiving thread was pinned",
        (false, _) => "where its receiving threads read",
    };
    let why = match shared && !pinned {
        true => "both ends share this machine's CPUs (loopback, or a lab), so a CPU is what carries the bytes: the figure is the machine's, not a network path's",
        false => "one flow is read by one thread on one CPU: when that CPU is full the receiver cannot drain faster, whatever the network or the buffers",
    };
    Some(Found {
        id: "cpu_bound",
        severity: if pinned || !shared { Severity::Warning } else { Severity::Note },
        confidence: if pinned { Confidence::High } else { Confidence::Medium },
        seen: format!(
            "CPU {} on {}, {place}, was {} busy (user {}, system {}, softirq {}) while the host as a whole was {} busy{sysctl}",
            cpu.cpu,
            host.name,
            pct(cpu.total),
            pct(cpu.user),
            pct(cpu.system),
            pct(cpu.softirq),
            pct(host.cpu.total)
        ),
        figures,
        why: why.into(),
        change: format!(
            "spread the flows over more CPUs: -P 4 with --affinity (CPU {} is full); a larger --read (it read {} per call); on a NIC, move its interrupts off that CPU (irq affinity, RPS)",
            cpu.cpu,
            size::human(host.read_size.into())
        ),
    })
}
