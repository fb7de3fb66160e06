//! What a metric is, and the metrics every run has whatever its kind (a kind's own are declared
//! in its section's folder): throughput, time, retransmits, CPU, service demand, TCP state, the
//! cost of a GB and of the lab's WAN emulator.

use crate::model::{Interval, Report, WanLinkResult};

/// One figure of a run that a series summarizes, a plot draws and a study charts.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// Its name, as series JSON, the store and the command line write it ("bits_per_second").
    pub name: &'static str,
    /// What it is, for titles and legends ("Throughput").
    pub label: &'static str,
    /// The unit its values are in ("bit/s", "µs", "%"; empty for plain counts), which a plot
    /// scales.
    pub unit: &'static str,
    /// Its value in a run's report, when the run has it; `None` for a figure of intervals
    /// only.
    pub run: Option<fn(&Report) -> Option<f64>>,
    /// Its value in one interval, when intervals have it; `None` for a figure of the whole run
    /// only.
    pub interval: Option<fn(&Interval) -> Option<f64>>,
}

/// A window shorter than this measures no CPU worth a figure: ten ticks of /proc/stat's usual
/// 100 Hz clock (a 1 MB copy lasts a few ms, and its CPU reads 0 or one tick). Shorter runs
/// have no `cpu_s_per_gb`, shown as "-", never as 0.
const MIN_CPU_WINDOW_S: f64 = 0.1;

/// Receivers' throughput.
pub const BITS_PER_SECOND: Metric = Metric {
    name: "bits_per_second",
    label: "Throughput",
    unit: "bit/s",
    run: Some(|r| Some(r.summary.transfer.bits_per_second)),
    interval: Some(|iv| Some(iv.bits_per_second)),
};

/// Senders' throughput.
pub const SENDER_BITS_PER_SECOND: Metric = Metric {
    name: "sender_bits_per_second",
    label: "Sender throughput",
    unit: "bit/s",
    run: Some(|r| Some(r.summary.transfer.sender_bits_per_second)),
    interval: None,
};

/// The cluster studies' aggregate: all bytes received over the whole test.
pub const AGGREGATE_BITS_PER_SECOND: Metric = Metric {
    name: "aggregate_bits_per_second",
    label: "Aggregate throughput",
    unit: "bit/s",
    run: Some(|r| Some(r.summary.aggregate_bits_per_second)),
    interval: None,
};

/// The receivers' measured window.
pub const SECONDS: Metric = Metric {
    name: "seconds",
    label: "Measured window",
    unit: "s",
    run: Some(|r| Some(r.summary.seconds)),
    interval: None,
};

/// Retransmitted segments.
pub const RETRANSMITS: Metric = Metric {
    name: "retransmits",
    label: "Retransmits",
    unit: "segments",
    run: Some(|r| Some(r.summary.retransmits as f64)),
    interval: Some(|iv| Some(iv.retransmits as f64)),
};

/// Busy CPU of the controller's host.
pub const CPU_LOCAL_PERCENT: Metric = Metric {
    name: "cpu_local_percent",
    label: "CPU, local",
    unit: "%",
    run: Some(|r| Some(r.summary.cpu.local.total)),
    interval: None,
};

/// Busy CPU of the agent's host.
pub const CPU_REMOTE_PERCENT: Metric = Metric {
    name: "cpu_remote_percent",
    label: "CPU, remote",
    unit: "%",
    run: Some(|r| Some(r.summary.cpu.remote.total)),
    interval: None,
};

/// The controller's host's busiest CPU.
pub const BUSIEST_CPU_LOCAL_PERCENT: Metric = Metric {
    name: "busiest_cpu_local_percent",
    label: "Busiest CPU, local",
    unit: "%",
    run: Some(|r| Some(r.summary.cpu.local.busiest_cpu.total)),
    interval: None,
};

/// CPU µs per KB moved on the controller's host.
pub const SERVICE_DEMAND_LOCAL: Metric = Metric {
    name: "service_demand_local_us_per_kb",
    label: "Service demand, local",
    unit: "µs/KB",
    run: Some(|r| Some(r.summary.service_demand_us_per_kb.local)),
    interval: None,
};

/// CPU µs per KB moved on the agent's host.
pub const SERVICE_DEMAND_REMOTE: Metric = Metric {
    name: "service_demand_remote_us_per_kb",
    label: "Service demand, remote",
    unit: "µs/KB",
    run: Some(|r| Some(r.summary.service_demand_us_per_kb.remote)),
    interval: None,
};

/// The senders' smoothed RTT.
pub const RTT_US: Metric = Metric {
    name: "rtt_us",
    label: "RTT",
    unit: "µs",
    run: Some(|r| Some(r.summary.tcp.rtt_us)),
    interval: Some(|iv| Some(iv.rtt_us)),
};

/// The senders' congestion window.
pub const CWND: Metric = Metric {
    name: "cwnd",
    label: "Congestion window",
    unit: "segments",
    run: None,
    interval: Some(|iv| Some(iv.cwnd as f64)),
};

/// Data segments the receivers got per ACK they sent.
pub const DATA_SEGS_PER_ACK: Metric = Metric {
    name: "data_segs_per_ack",
    label: "Data segments per ACK",
    unit: "",
    run: Some(|r| Some(r.summary.tcp.data_segs_per_ack)),
    interval: None,
};

/// Busy CPU-seconds of every machine per 10^9 bytes received.
pub const CPU_S_PER_GB: Metric = Metric {
    name: "cpu_s_per_gb",
    label: "CPU per GB moved",
    unit: "CPU s/GB",
    run: Some(cpu_s_per_gb),
    interval: None,
};

/// The lab's WAN forwarders' CPU over the window, as a share of one host's CPUs.
pub const EMULATOR_CPU_PERCENT: Metric = Metric {
    name: "emulator_cpu_percent",
    label: "WAN emulator CPU",
    unit: "%",
    run: Some(emulator_cpu_percent),
    interval: None,
};

/// The receive window the flows advertised, their mean.
pub const WINDOW_BYTES: Metric = Metric {
    name: "window_bytes",
    label: "Advertised receive window",
    unit: "B",
    run: Some(window_bytes),
    interval: None,
};

/// Data packets and ACK packets per second: drawn per interval, two lines, by the interval
/// chart itself.
pub const PACKETS: Metric = Metric {
    name: "packets",
    label: "Packets/s",
    unit: "",
    run: None,
    interval: None,
};

/// The metrics every run has, in the order a series lists them.
pub const COMMON: &[Metric] = &[
    BITS_PER_SECOND,
    SENDER_BITS_PER_SECOND,
    AGGREGATE_BITS_PER_SECOND,
    SECONDS,
    RETRANSMITS,
    CPU_LOCAL_PERCENT,
    CPU_REMOTE_PERCENT,
    BUSIEST_CPU_LOCAL_PERCENT,
    SERVICE_DEMAND_LOCAL,
    SERVICE_DEMAND_REMOTE,
    RTT_US,
    CWND,
    DATA_SEGS_PER_ACK,
    CPU_S_PER_GB,
    EMULATOR_CPU_PERCENT,
    WINDOW_BYTES,
    PACKETS,
];

/// Busy CPU-seconds of every machine per GB, when the window is long enough to measure CPU.
fn cpu_s_per_gb(r: &Report) -> Option<f64> {
    let s = &r.summary;
    let gb = s.transfer.bytes as f64 / 1e9;
    let cpu_s = machine_cpu_s(r);
    (gb > 0.0 && s.seconds >= MIN_CPU_WINDOW_S && cpu_s > 0.0).then(|| cpu_s / gb)
}

/// The WAN forwarders' CPU as a share of the first host's CPUs, when a forwarder said.
fn emulator_cpu_percent(r: &Report) -> Option<f64> {
    let s = &r.summary;
    r.wan.iter().any(|w| w.forwarder_cpu_s.is_some()).then(|| {
        let capacity = s.seconds * r.hosts.first().map_or(1, |h| h.cpus.max(1)) as f64;
        crate::floor::ratio(emulator_cpu_s(r) * 100.0, capacity)
    })
}

/// The mean window the flows that reported one advertised.
fn window_bytes(r: &Report) -> Option<f64> {
    let windows: Vec<f64> = r
        .flows
        .iter()
        .filter(|f| f.window > 0)
        .map(|f| f64::from(f.window))
        .collect();
    (!windows.is_empty()).then(|| windows.iter().sum::<f64>() / windows.len() as f64)
}

/// Busy CPU-seconds over the window on every machine that took part, each machine counted once:
/// ends on one machine (loopback, lab namespaces) share its CPUs and report the same figures.
fn machine_cpu_s(r: &Report) -> f64 {
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0.0;
    for h in &r.hosts {
        if seen.contains(&h.hostname.as_str()) {
            continue;
        }
        seen.push(&h.hostname);
        total += h.cpu.total / 100.0 * h.cpus.max(1) as f64 * r.summary.seconds;
    }
    (total - emulator_cpu_s(r)).max(0.0)
}

/// The lab's WAN forwarders' CPU-seconds in the window, which the machine the lab's hosts share
/// counts in its figures.
pub fn emulator_cpu_s(r: &Report) -> f64 {
    r.wan
        .iter()
        .filter_map(|w| forwarder_window_cpu_s(r, w))
        .fold(0.0, |a, b| a + b)
}

/// One WAN forwarder's CPU-seconds in the window: its CPU over the test, by the share of the
/// test's bytes that the window received (its work follows the frames it forwards).
pub fn forwarder_window_cpu_s(r: &Report, w: &WanLinkResult) -> Option<f64> {
    let s = &r.summary;
    let share = match s.transfer.total_bytes_received {
        0 => 1.0,
        all => (s.transfer.bytes as f64 / all as f64).min(1.0),
    };
    w.forwarder_cpu_s.map(|c| c * share)
}
