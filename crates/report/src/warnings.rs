//! Warnings: what the figures suggest the user do, each naming the setting to change.

use crate::build::RunData;
use crate::model::{Cpu, Report};
use fathom_proto::sample::EndpointInfo;

/// Share of the window beyond which a limit is worth a warning, %.
const LIMITED_PCT: f64 = 25.0;
/// A CPU this busy probably bounds the result, %.
const SATURATED_PCT: f64 = 95.0;

/// All warnings for a finished report.
pub fn collect(run: &RunData, r: &Report) -> Vec<String> {
    let mut w = Vec::new();
    let s = &run.plan.socket;
    for (name, end) in [("local", &run.local.info), ("remote", &run.remote.info)] {
        clamp(&mut w, name, end, "--sndbuf", "SO_SNDBUF", s.sndbuf, end.limits.wmem_max, "wmem_max");
        clamp(&mut w, name, end, "--rcvbuf", "SO_RCVBUF", s.rcvbuf, end.limits.rmem_max, "rmem_max");
    }
    let t = &r.summary.tcp;
    if t.rwnd_limited_pct > LIMITED_PCT {
        let rmem = r.hosts.remote.rmem_max.max(r.hosts.local.rmem_max);
        w.push(format!(
            "senders were limited by the receive window {:.0}% of the time: raise --buffer/--rcvbuf or net.core.rmem_max (now {})",
            t.rwnd_limited_pct,
            human_bytes(rmem)
        ));
    }
    if t.sndbuf_limited_pct > LIMITED_PCT {
        w.push(format!(
            "senders were limited by their send buffer {:.0}% of the time: raise --buffer/--sndbuf or net.core.wmem_max (now {})",
            t.sndbuf_limited_pct,
            human_bytes(r.hosts.local.wmem_max.max(r.hosts.remote.wmem_max))
        ));
    }
    for (name, cpu) in [("local", &r.summary.cpu.local), ("remote", &r.summary.cpu.remote)] {
        saturated(&mut w, name, cpu);
        if run.embedded {
            break;
        }
    }
    w
}

#[allow(clippy::too_many_arguments)]
fn clamp(w: &mut Vec<String>, end: &str, e: &EndpointInfo, flag: &str, opt: &str, req: Option<u32>, max: u64, sysctl: &str) {
    let Some(req) = req else { return };
    if u64::from(req) <= max {
        return;
    }
    let granted = e.flows.first().map(|f| if opt == "SO_SNDBUF" { f.sndbuf } else { f.rcvbuf }).unwrap_or(0);
    w.push(format!(
        "{flag} {}: the kernel on the {end} host ({}) capped {opt} at {} (twice net.core.{sysctl} = {}); raise it: sysctl -w net.core.{sysctl}={req}",
        human_bytes(req.into()),
        e.host.hostname,
        human_bytes(granted.into()),
        max
    ));
}

fn saturated(w: &mut Vec<String>, end: &str, cpu: &Cpu) {
    if cpu.busiest_cpu.total >= SATURATED_PCT {
        w.push(format!(
            "CPU {} on the {end} host was {:.0}% busy: the result may be bound by that CPU, not the network; spread flows with -P and --affinity",
            cpu.busiest_cpu.cpu, cpu.busiest_cpu.total
        ));
    }
}

/// 1024-based sizes as the CLI takes them: "64 KB", "4 MB".
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || (v.fract() == 0.0) {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
