//! The result exchange: the client's results tell each receiver how much to drain; the
//! server's results are fathom's counts in the shape iperf3's client reads (`streams[]` by id,
//! CPU as a percentage of the test's wall time).

use super::params::Params;
use super::stream::StreamEnd;
use fathom_engine::measure::cpu;
use fathom_proto::sample::{CpuSnapshot, CpuTicks};
use fathom_report::model::PeerCpu;
use serde_json::{json, Value};

/// iperf3's stream ids in connection order: 1, 3, 4, 5… (its list code skips 2).
pub fn stream_id(index: usize) -> u64 {
    if index == 0 {
        1
    } else {
        index as u64 + 2
    }
}

/// The bytes the client says it sent on each stream, by index (u64::MAX where it says nothing).
pub fn client_sent(client: &Value, n: usize) -> Vec<u64> {
    let mut out = vec![u64::MAX; n];
    let streams = client.get("streams").and_then(Value::as_array);
    for s in streams.into_iter().flatten().take(n.saturating_mul(2)) {
        let (Some(id), Some(bytes)) = (
            s.get("id").and_then(Value::as_u64),
            s.get("bytes").and_then(Value::as_u64),
        ) else {
            continue;
        };
        if let Some(slot) = (0..n).find(|&i| stream_id(i) == id) {
            out[slot] = bytes;
        }
    }
    out
}

/// The largest CPU percentage taken from a peer: its process's share of its wall time, which
/// passes 100 only with several threads busy.
const PEER_CPU_MAX: f64 = 100.0 * 4096.0;

/// The CPU figures a peer's results give (`cpu_util_total/user/system`); one that is missing,
/// not a number, negative or beyond [`PEER_CPU_MAX`] is absent.
pub fn peer_cpu(results: &Value) -> PeerCpu {
    let get = |key: &str| {
        results
            .get(key)
            .and_then(Value::as_f64)
            .filter(|v| (0.0..=PEER_CPU_MAX).contains(v))
    };
    PeerCpu {
        total: get("cpu_util_total"),
        user: get("cpu_util_user"),
        system: get("cpu_util_system"),
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
/// ([`super::stream::thread_cpu_us`] at the test's start and end) plus every stream thread's.
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

/// JSON holds no NaN or infinity.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
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
    fn reads_the_clients_bytes_by_id() {
        let c = json!({"streams":[{"id":3,"bytes":7},{"id":1,"bytes":5},{"id":9,"bytes":1},{"id":"x"}]});
        assert_eq!(client_sent(&c, 3), [5, 7, u64::MAX]);
        assert_eq!(client_sent(&json!(null), 1), [u64::MAX]);
    }

    #[test]
    fn reads_only_the_cpu_figures_the_peer_gave() {
        let r = json!({"cpu_util_total": 12.5, "cpu_util_user": -1, "cpu_util_system": "x"});
        let p = peer_cpu(&r);
        assert_eq!((p.total, p.user, p.system), (Some(12.5), None, None));
        assert_eq!(peer_cpu(&json!({"cpu_util_total": 1e300})).total, None);
        assert_eq!(peer_cpu(&json!(null)), PeerCpu::default());
    }

    #[test]
    fn cpu_is_a_share_of_wall_time() {
        assert_eq!(cpu_percent(500_000, 250_000, 1.0), (75.0, 50.0, 25.0));
        assert_eq!(cpu_percent(1, 1, 0.0), (0.0, 0.0, 0.0));
    }
}
