//! Reports built in code for the causes' tests: a healthy stream between two machines, and the
//! settings of a common host, which each test bends until one cause must fire (or must not).

use crate::Settings;
use fathom_report::model::{CpuOne, FlowResult, HostResult, Report, ThreadResult, Transfer};

/// A healthy 1 Gbit/s forward stream from "local" (machine a) to "h2" (machine b) at 1 ms RTT
/// for 2 s, every CPU 30% busy (each end's worker used half a CPU), no limit, no loss.
pub(super) fn stream() -> Report {
    let mut r = Report::default();
    r.test.kind = "stream".into();
    r.test.write_size = 128 * 1024;
    r.test.duration_s = Some(2.0);
    r.hosts = vec![host("h2", "b"), host("local", "a")];
    r.flows = vec![FlowResult {
        id: 0,
        direction: "forward".into(),
        transfer: Transfer {
            bits_per_second: 1e9,
            sender_bits_per_second: 1e9,
            bytes: 125_000_000,
            sender_bytes: 125_000_000,
            ..Transfer::default()
        },
        rtt_us: 1000,
        min_rtt_us: 900,
        window: 4 << 20,
        mss: 1448,
        rcvbuf: 131_072,
        rcvbuf_end: 4 << 20,
        sndbuf: 16_384,
        sndbuf_end: 4 << 20,
        sender: "10.0.0.1:40000".into(),
        receiver: "10.0.0.2:5201".into(),
        ..FlowResult::default()
    }];
    r.summary.transfer.bits_per_second = 1e9;
    r.summary.transfer.sender_bytes = 125_000_000;
    r
}

/// A host named `name` on machine `hostname`: two CPUs 30% busy, one worker on CPU 0.
pub(super) fn host(name: &str, hostname: &str) -> HostResult {
    let mut h = HostResult {
        name: name.into(),
        hostname: hostname.into(),
        cpus: 2,
        read_size: 32 * 1024,
        rmem_max: 212_992,
        wmem_max: 212_992,
        threads: vec![ThreadResult {
            pinned_cpu: None,
            last_cpu: 0,
            flows: 1,
            cpu_s: 1.0,
        }],
        ..HostResult::default()
    };
    h.cpu.per_cpu = (0..2).map(|c| cpu(c, 30.0)).collect();
    h.cpu.busiest_cpu = cpu(0, 30.0);
    h.cpu.total = 30.0;
    h
}

/// CPU `n` at `busy`%, mostly system time.
pub(super) fn cpu(n: u32, busy: f64) -> CpuOne {
    CpuOne {
        cpu: n,
        total: busy,
        user: busy * 0.2,
        system: busy * 0.5,
        softirq: busy * 0.3,
    }
}

/// Makes CPU `n` of host `i` saturated (100%) and the one its receiving thread ran on.
pub(super) fn saturate(r: &mut Report, i: usize, n: u32, pinned: bool) {
    let h = &mut r.hosts[i];
    h.cpu.per_cpu[n as usize] = cpu(n, 100.0);
    h.cpu.busiest_cpu = cpu(n, 100.0);
    h.threads[0].last_cpu = n;
    h.threads[0].pinned_cpu = pinned.then_some(n);
}

/// A common host's socket buffer settings: rmem_max 208 KB, tcp_rmem up to 6 MB.
pub(super) fn settings() -> Settings {
    let mut s = Settings::default();
    for (k, v) in [
        ("net.core.rmem_max", "212992"),
        ("net.core.wmem_max", "212992"),
        ("net.ipv4.tcp_rmem", "4096 131072 6291456"),
        ("net.ipv4.tcp_wmem", "4096 16384 4194304"),
    ] {
        s.sysctls.insert(k.into(), v.into());
    }
    s
}
