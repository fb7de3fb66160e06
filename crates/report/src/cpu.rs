//! CPU utilization between two snapshots, from /proc/stat ticks and the threads' own clocks.

use crate::floor::ratio;
use crate::model::{Cpu, CpuOne};
use crate::run::{EndData, Window};
use fathom_proto::sample::{CpuSnapshot, CpuTicks};

/// Utilization of one host between `a` and `b`, `seconds` apart; `hz` = /proc/stat ticks per
/// second; `shared` when both test ends ran in one process.
pub fn cpu_between(a: &CpuSnapshot, b: &CpuSnapshot, hz: f64, seconds: f64, shared: bool) -> Cpu {
    let per: Vec<CpuTicks> = b
        .per_cpu
        .iter()
        .zip(&a.per_cpu)
        .map(|(y, x)| y.since(x))
        .collect();
    let sum = per.iter().fold(CpuTicks::default(), |sum, t| sum.plus(t));
    let total = sum.total() as f64;
    let pct = |v: u64| ratio(v as f64 * 100.0, total);
    let per_cpu: Vec<CpuOne> = per
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let tt = t.total() as f64;
            let p = |v: u64| ratio(v as f64 * 100.0, tt);
            CpuOne {
                cpu: i as u32,
                total: p(t.busy()),
                user: p(t.user),
                system: p(t.system),
                softirq: p(t.softirq),
            }
        })
        .collect();
    let busiest = per_cpu
        .iter()
        .cloned()
        .max_by(|x, y| x.total.total_cmp(&y.total))
        .unwrap_or_default();
    let fathom_s = b.threads_ns.saturating_sub(a.threads_ns) as f64 / 1e9;
    let capacity_s = if total > 0.0 {
        total / hz
    } else {
        seconds * per.len() as f64
    };
    Cpu {
        total: pct(sum.busy()),
        user: pct(sum.user),
        system: pct(sum.system),
        irq: pct(sum.irq),
        softirq: pct(sum.softirq),
        steal: pct(sum.steal),
        busiest_cpu: busiest,
        per_cpu,
        process_user_s: b.process_user_us.saturating_sub(a.process_user_us) as f64 / 1e6,
        process_system_s: b.process_system_us.saturating_sub(a.process_system_us) as f64 / 1e6,
        fathom_s,
        fathom_percent: ratio(fathom_s * 100.0, capacity_s),
        shared_process: shared,
        iperf3: None,
    }
}

/// Busy ticks of all CPUs between two snapshots.
pub fn busy_ticks(a: &CpuSnapshot, b: &CpuSnapshot) -> u64 {
    b.per_cpu
        .iter()
        .zip(&a.per_cpu)
        .map(|(y, x)| y.since(x).busy())
        .sum()
}

/// Busy CPU µs of an end over its window.
pub(crate) fn busy_us(e: &EndData, w: &Window<'_>) -> f64 {
    let hz = e.info.host.clock_ticks.max(1) as f64;
    busy_ticks(&w.start.cpu, &w.end.cpu) as f64 / hz * 1e6
}
