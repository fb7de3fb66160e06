//! A deterministic synthetic run: exact counters with no timing noise, so that the renderers'
//! output can be asserted byte for byte.
//!
//! The run is a 3 s stream test with 1 s intervals after a 1 s warm-up. Both ends snapshot at
//! t = 0 (Start), 1 (WindowStart), 2, 3 (Interval), 4 (WindowEnd) and 4.5 s (Final). Flow `i`
//! (0-based) moves `i + 1` times the bytes of flow 0; flow 0's receiver reads 50, 100, 110 and
//! 120 MB (10^6 bytes) in the four intervals and 5 MB while draining, so over the window it
//! reads 330 MB: 880 Mbit/s. Both hosts have 2 CPUs and 100 clock ticks per second; the
//! controller's host is 40% busy, the agent's 46%.

pub mod kinds;
pub mod profile;

use crate::run::{EndData, Role, RunData};
use fathom_proto::plan::{Direction, FlowPlan, Limit, TestPlan};
use fathom_proto::sample::{
    BufferLimits, CpuSnapshot, CpuTicks, EndpointInfo, FlowInfo, FlowSnapshot, HostInfo, Mark,
    Snapshot, TcpInfo, ThreadInfo,
};

/// When each end takes its snapshots (ms since t0), and why.
pub const MARKS: [(i64, Mark); 6] = [
    (0, Mark::Start),
    (1000, Mark::WindowStart),
    (2000, Mark::Interval),
    (3000, Mark::Interval),
    (4000, Mark::WindowEnd),
    (4500, Mark::Final),
];
/// Bytes flow 0's receiver has read at each snapshot (flow `i`: `i + 1` times as many).
pub const RECEIVED: [u64; 6] = [
    0,
    50_000_000,
    150_000_000,
    260_000_000,
    380_000_000,
    385_000_000,
];
/// Bytes flow 0's sender has written but its receiver not yet read, at each snapshot.
pub const IN_FLIGHT: [u64; 6] = [0, 1_000_000, 2_000_000, 2_000_000, 3_000_000, 0];
/// Retransmits of every flow's sender so far.
pub const RETRANSMITS: [u32; 6] = [0, 3, 4, 6, 10, 10];
/// Time every sender was limited by the receive window so far, µs (30% of the window).
pub const RWND_LIMITED_US: [u64; 6] = [0, 0, 300_000, 600_000, 900_000, 900_000];
/// Time every sender was limited by its send buffer so far, µs (10% of the window).
pub const SNDBUF_LIMITED_US: [u64; 6] = [0, 0, 0, 150_000, 300_000, 300_000];
/// Pure ACKs a receiver sends per 5 data segments it reads (2.5 segments per ACK).
pub const ACKS_PER_5_SEGMENTS: u64 = 2;
/// Payload bytes per data segment in the fake counters.
pub const SEGMENT: u64 = 1000;
/// /proc/stat ticks per second.
pub const CLOCK_TICKS: u32 = 100;
/// Ticks per second of the controller's two CPUs (user, system, irq, softirq, steal, idle).
pub const LOCAL_TICKS: [[u64; 6]; 2] = [[20, 30, 0, 10, 0, 40], [6, 10, 0, 4, 0, 80]];
/// Ticks per second of the agent's two CPUs.
pub const REMOTE_TICKS: [[u64; 6]; 2] = [[10, 20, 2, 40, 0, 28], [10, 6, 0, 4, 0, 80]];

/// One end's synthetic behaviour.
struct Side {
    /// Which way this end sends.
    sends: Direction,
    /// /proc/stat ticks per second per CPU.
    ticks: [[u64; 6]; 2],
    /// fathom's own threads' CPU, ns per second.
    threads_ns_per_s: u64,
    /// The process's user and system CPU, µs per second.
    process_us_per_s: (u64, u64),
    hostname: &'static str,
    /// Address of this end's data sockets, without the port.
    addr: &'static str,
}

const LOCAL: Side = Side {
    sends: Direction::Forward,
    ticks: LOCAL_TICKS,
    threads_ns_per_s: 300_000_000,
    process_us_per_s: (200_000, 150_000),
    hostname: "fake-local",
    addr: "192.0.2.1",
};

const REMOTE: Side = Side {
    sends: Direction::Reverse,
    ticks: REMOTE_TICKS,
    threads_ns_per_s: 400_000_000,
    process_us_per_s: (250_000, 200_000),
    hostname: "fake-remote",
    addr: "192.0.2.10",
};

/// A synthetic run of `flows` flows per direction (`-P`), both ways when `bidir`: flows
/// `0..flows` go forward, `flows..2*flows` reverse.
pub fn run_data(flows: u32, bidir: bool) -> RunData {
    let n = flows.max(1);
    let plan_flows: Vec<FlowPlan> = (0..if bidir { 2 * n } else { n })
        .map(|id| FlowPlan {
            id,
            dir: if id < n {
                Direction::Forward
            } else {
                Direction::Reverse
            },
        })
        .collect();
    let plan = TestPlan {
        flows: plan_flows,
        limit: Limit::Time {
            duration_ns: 3_000_000_000,
        },
        omit_ns: 1_000_000_000,
        write_size: 128 * 1024,
        read_size: 128 * 1024,
        ..TestPlan::default()
    };
    let server = EndData {
        name: "192.0.2.10:5301".into(),
        role: Role::Server,
        clock_offset_ns: 12_500,
        control_rtt_ns: 85_000,
        ..end(&REMOTE, &plan.flows)
    };
    let client = EndData {
        name: "local".into(),
        role: Role::Client,
        in_process: true,
        ..end(&LOCAL, &plan.flows)
    };
    RunData {
        ends: vec![server, client],
        plan,
        embedded: false,
        started_unix_s: 1_700_000_000.0,
        wan: Vec::new(),
        ipsec: None,
        error: None,
    }
}

/// One end's snapshots and final facts.
fn end(side: &Side, flows: &[FlowPlan]) -> EndData {
    let snaps = MARKS
        .iter()
        .enumerate()
        .map(|(k, &(ms, mark))| Snapshot {
            mark,
            t_ns: ms * 1_000_000,
            flows: flows.iter().map(|f| flow_snapshot(side, f, k)).collect(),
            cpu: cpu(side, ms as u64),
            latency: None,
            kind: None,
            op_latency: Vec::new(),
        })
        .collect();
    EndData {
        info: info(side, flows),
        snaps,
        ids: flows.iter().map(|f| f.id).collect(),
        ..EndData::default()
    }
}

/// Flow `f` at snapshot `k`, as `side` sees it.
fn flow_snapshot(side: &Side, f: &FlowPlan, k: usize) -> FlowSnapshot {
    let scale = u64::from(f.id) + 1;
    let received = RECEIVED[k] * scale;
    let sent = received + IN_FLIGHT[k] * scale;
    let ms = MARKS[k].0 as u64;
    // (its TCP_INFO, bytes sent, bytes received): a sender's or a receiver's.
    let (tcp, sent, received) = if f.dir == side.sends {
        let tcp = TcpInfo {
            state: 1,
            retransmits: RETRANSMITS[k],
            rtt_us: 100 + 10 * k as u32 + f.id,
            rttvar_us: 20 + f.id,
            min_rtt_us: 50,
            snd_cwnd: 10 * (k as u32 + 1) + f.id,
            snd_mss: 1448,
            rcv_mss: 536,
            segs_out: (sent / SEGMENT) as u32,
            data_segs_out: (sent / SEGMENT) as u32,
            segs_in: (received / SEGMENT * ACKS_PER_5_SEGMENTS / 5) as u32,
            delivery_rate: 110_000_000 * scale,
            pacing_rate: 220_000_000 * scale,
            busy_time_us: ms * 1000,
            rwnd_limited_us: RWND_LIMITED_US[k],
            sndbuf_limited_us: SNDBUF_LIMITED_US[k],
            bytes_acked: received,
            snd_wnd: 3_000_000,
            rcv_wnd: 65_535,
            ..TcpInfo::default()
        };
        (tcp, sent, 0)
    } else {
        let segs = received / SEGMENT;
        let tcp = TcpInfo {
            state: 1,
            rtt_us: 60,
            rttvar_us: 30,
            min_rtt_us: 40,
            snd_cwnd: 10,
            snd_mss: 1448,
            rcv_mss: 1448,
            segs_in: segs as u32,
            data_segs_in: segs as u32,
            segs_out: (segs * ACKS_PER_5_SEGMENTS / 5) as u32,
            bytes_received: received,
            snd_wnd: 65_535,
            rcv_wnd: 3_000_000,
            ..TcpInfo::default()
        };
        (tcp, 0, received)
    };
    FlowSnapshot {
        sent,
        received,
        tcp: Some(tcp),
        ..FlowSnapshot::default()
    }
}

/// `side`'s CPU counters `ms` milliseconds after t0, from a non-zero boot-time base.
fn cpu(side: &Side, ms: u64) -> CpuSnapshot {
    let at = |per_s: u64| per_s * ms / 1000;
    let per_cpu = side
        .ticks
        .iter()
        .map(|t| CpuTicks {
            user: 1000 + at(t[0]),
            system: 1000 + at(t[1]),
            irq: 100 + at(t[2]),
            softirq: 500 + at(t[3]),
            steal: at(t[4]),
            idle: 100_000 + at(t[5]),
        })
        .collect();
    CpuSnapshot {
        per_cpu,
        threads_ns: at(side.threads_ns_per_s),
        process_user_us: at(side.process_us_per_s.0),
        process_system_us: at(side.process_us_per_s.1),
    }
}

/// What `side` reports at the end: host, sockets, threads, limits.
fn info(side: &Side, flows: &[FlowPlan]) -> EndpointInfo {
    let other = if side.addr == LOCAL.addr {
        REMOTE.addr
    } else {
        LOCAL.addr
    };
    let client_port = |id: u32| 40_000 + id;
    let flow_infos = flows
        .iter()
        .map(|f| {
            let (lp, pp) = if side.sends == Direction::Forward {
                (client_port(f.id), 5302)
            } else {
                (5302, client_port(f.id))
            };
            FlowInfo {
                id: f.id,
                local: format!("{}:{lp}", side.addr),
                peer: format!("{other}:{pp}"),
                sndbuf: 16_384,
                rcvbuf: 131_072,
                sndbuf_end: 4_194_304,
                rcvbuf_end: 6_291_456,
                cc: "cubic".into(),
                mss: 1448,
                first_byte_ns: Some(1_000_000),
                last_byte_ns: Some(4_400_000_000),
            }
        })
        .collect();
    let threads = flows.len().clamp(1, 2) as u32;
    let total_ns = side.threads_ns_per_s * 9 / 2;
    EndpointInfo {
        host: HostInfo {
            hostname: side.hostname.into(),
            kernel: "6.1.0-fake".into(),
            cpus: 2,
            version: "0.0.0-fake".into(),
            clock_ticks: CLOCK_TICKS,
        },
        flows: flow_infos,
        threads: (0..threads)
            .map(|j| ThreadInfo {
                pinned: None,
                last_cpu: j,
                flows: flows.len() as u32 / threads + u32::from(j < flows.len() as u32 % threads),
                cpu_ns: total_ns / u64::from(threads),
            })
            .collect(),
        wait: "epoll".into(),
        defaults: Vec::new(),
        chosen_sndbuf: None,
        read_size: 131_072,
        limits: BufferLimits {
            rmem_max: 212_992,
            wmem_max: 212_992,
            tcp_rmem: [4096, 131_072, 6_291_456],
            tcp_wmem: [4096, 16_384, 4_194_304],
        },
        sampler_cpu_ns: 9_000_000,
        tls: None,
        error: None,
    }
}

/// `report` as JSON schema 1 wrote it, for the tests that read old documents: its `rr` objects
/// flattened into their parents (`test`, `summary`, each flow and interval).
pub fn schema_1_json(report: &crate::Report) -> String {
    use serde_json::Value;
    let flatten = |o: &mut Value| {
        if let Some(map) = o.as_object_mut() {
            if let Some(Value::Object(rr)) = map.remove("rr") {
                map.extend(rr);
            }
        }
    };
    let mut doc = serde_json::to_value(report).unwrap_or_default();
    flatten(&mut doc["test"]);
    flatten(&mut doc["summary"]);
    for list in ["flows", "intervals"] {
        if let Some(items) = doc[list].as_array_mut() {
            items.iter_mut().for_each(flatten);
        }
    }
    // Schema 1 intervals had only the instants their snapshots were taken, as start and end.
    for iv in doc["intervals"].as_array_mut().into_iter().flatten() {
        if let Some(map) = iv.as_object_mut() {
            map.remove("measured_start");
            map.remove("measured_end");
        }
    }
    doc["schema_version"] = Value::from(1);
    doc.to_string()
}
