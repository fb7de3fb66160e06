//! The result exchange: the client's results tell each receiver how much to drain; the
//! server's results are fathom's counts in the shape iperf3's client reads (`streams[]` by id,
//! CPU as a percentage of the test's wall time).

use super::figures::finite;
use super::job::StreamEnd;
use super::params::Params;
use fathom_engine::measure::cpu;
use fathom_proto::sample::{CpuSnapshot, CpuTicks};
use serde_json::{json, Value};

/// iperf3's stream ids in connection order: 1, 3, 4, 5… (its list code skips 2).
pub fn stream_id(index: usize) -> u64 {
    if index == 0 {
        1
    } else {
        index as u64 + 2
    }
}

/// The host's per-CPU /proc/stat ticks at a test's start and end, as fathom's own runs read
/// them (`hosts[].cpu`); empty where /proc/stat could not be read.
#[derive(Debug, Clone, Default)]
pub struct HostTicks {
    /// At TEST_RUNNING.
    pub start: Vec<CpuTicks>,
    /// When the results were ready.
    pub end: Vec<CpuTicks>,
}

impl HostTicks {
    /// Reads the start.
    pub fn begin() -> HostTicks {
        HostTicks {
            start: cpu::proc_stat(),
            end: Vec::new(),
        }
    }

    /// Reads the end.
    pub fn finish(&mut self) {
        self.end = cpu::proc_stat();
    }

    /// Both readings as CPU snapshots, when they hold the same CPUs (else the host's figures
    /// cannot be had).
    pub fn snapshots(&self) -> Option<(CpuSnapshot, CpuSnapshot)> {
        let snap = |t: &[CpuTicks]| CpuSnapshot {
            per_cpu: t.to_vec(),
            ..CpuSnapshot::default()
        };
        (!self.start.is_empty() && self.start.len() == self.end.len())
            .then(|| (snap(&self.start), snap(&self.end)))
    }
}

/// The CPU an end used, user and system µs: its control thread's from `cpu0` to `cpu1`
/// (fathom-engine's `thread_rusage_us` at the test's start and end) plus every stream thread's.
pub fn cpu_used(cpu0: (u64, u64), cpu1: (u64, u64), ends: &[StreamEnd]) -> (u64, u64) {
    ends.iter()
        .fold((cpu1.0 - cpu0.0, cpu1.1 - cpu0.1), |a, e| {
            (a.0 + e.cpu_us.0, a.1 + e.cpu_us.1)
        })
}

/// The server's CPU over a test: (total, user, system) as percentages of `wall_s`.
pub fn cpu_percent(user_us: u64, sys_us: u64, wall_s: f64) -> (f64, f64, f64) {
    if wall_s <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let pct = |us: u64| us as f64 / 1e6 / wall_s * 100.0;
    (pct(user_us + sys_us), pct(user_us), pct(sys_us))
}

/// The results message: one entry per stream, fathom's counts.
pub fn server_results(
    p: &Params,
    ends: &[StreamEnd],
    cpu: (f64, f64, f64),
    end_s: f64,
    cc: Option<&str>,
) -> Value {
    let sends_tcp = !p.udp && (p.reverse || p.bidir);
    let streams: Vec<Value> = ends
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let retransmits: i64 = if !p.udp && p.server_sends(i as u32) {
                e.retransmits.min(i64::MAX as u64) as i64
            } else {
                -1
            };
            json!({
                "id": stream_id(i),
                "bytes": e.bytes,
                "retransmits": retransmits,
                "jitter": finite(e.jitter_s),
                "errors": e.lost,
                "packets": e.packets,
                "start_time": 0,
                "end_time": finite(end_s),
            })
        })
        .collect();
    let mut v = json!({
        "cpu_util_total": finite(cpu.0),
        "cpu_util_user": finite(cpu.1),
        "cpu_util_system": finite(cpu.2),
        "sender_has_retransmits": if sends_tcp { 1 } else if p.reverse || p.bidir { 0 } else { -1 },
        "streams": streams,
    });
    if let Some(cc) = cc {
        v["congestion_used"] = json!(cc);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_skip_two_as_iperf3s_do() {
        let ids: Vec<u64> = (0..4).map(stream_id).collect();
        assert_eq!(ids, [1, 3, 4, 5]);
    }

    #[test]
    fn cpu_is_a_share_of_wall_time() {
        assert_eq!(cpu_percent(500_000, 250_000, 1.0), (75.0, 50.0, 25.0));
        assert_eq!(cpu_percent(1, 1, 0.0), (0.0, 0.0, 0.0));
    }
}
