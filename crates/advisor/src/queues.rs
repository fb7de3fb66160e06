//! Rules on an interface's queues: its RX ring and channels (from `ethtool -g` and `-l`), RFS
//! and XPS (from sysfs and net.core.rps_sock_flow_entries). All are notes: they limit many
//! flows or bursts, not one stream on a quiet path.

use crate::buffers::on;
use crate::nic::all_cpus;
use crate::{Confidence, Finding, Iface, Settings, Severity};

/// Below this many RX descriptors (when the NIC offers more) a burst overflows the ring.
pub const RING_MIN: u64 = 1024;
/// The RFS flow table the kernel documentation suggests for a server.
pub const RFS_ENTRIES: u64 = 32_768;

/// The findings on every interface's queues.
pub fn findings(s: &Settings) -> Vec<Finding> {
    let mut out = Vec::new();
    for i in &s.ifaces {
        ring(i, &mut out);
        channels(i, s.cpus, &mut out);
        rfs(i, s, &mut out);
        xps(i, s.cpus, &mut out);
    }
    out
}

/// An RX ring below [`RING_MIN`] on a NIC that offers more.
fn ring(i: &Iface, out: &mut Vec<Finding>) {
    let Some((cur, max)) = i.ring_rx.filter(|&(c, m)| c < m && c < RING_MIN) else {
        return;
    };
    let to = max.min(4 * RING_MIN);
    out.push(Finding {
        why: format!(
            "{}'s receive ring holds {cur} packets: a burst longer than that while the CPU is busy is dropped by the NIC (rx_missed/fifo errors in ethtool -S), which TCP sees as loss",
            i.name
        ),
        change: format!("ethtool -G {} rx {to}", i.name),
        ..on(
            &format!("ethtool -g {}", i.name),
            format!("RX ring {cur} (maximum {max})"),
            "rx_ring",
            Severity::Note,
            Confidence::Low,
        )
    });
}

/// Fewer channels in use than the NIC offers and the host has CPUs for.
fn channels(i: &Iface, cpus: usize, out: &mut Vec<Finding>) {
    let cpus = cpus as u64;
    let Some((cur, max)) = i.channels.filter(|&(c, m)| c < m && c < cpus) else {
        return;
    };
    let to = max.min(cpus);
    out.push(Finding {
        why: format!(
            "{} receives on {cur} queue(s) while it offers {max} and the host has {cpus} CPUs: its interrupts and receive processing spread over {cur} CPU(s) at most",
            i.name
        ),
        change: format!(
            "ethtool -L {} combined {to}   (rx {to} on a NIC without combined channels)",
            i.name
        ),
        ..on(
            &format!("ethtool -l {}", i.name),
            format!("{cur} of {max} channels"),
            "channels",
            Severity::Note,
            Confidence::Medium,
        )
    });
}

/// RPS on without RFS: packets are spread by hash, not steered to the application's CPU.
fn rfs(i: &Iface, s: &Settings, out: &mut Vec<Finding>) {
    let name = "net.core.rps_sock_flow_entries";
    let Some(entries) = s.number(name) else {
        return;
    };
    if !i.rps || (entries > 0 && i.rps_flow_cnt > 0) {
        return;
    }
    let (source, value) = match entries {
        0 => (name.to_string(), "0".to_string()),
        _ => (
            format!("/sys/class/net/{}/queues/rx-0/rps_flow_cnt", i.name),
            "0 on every receive queue".to_string(),
        ),
    };
    out.push(Finding {
        why: format!(
            "RPS spreads {}'s packets over CPUs by hash but RFS is off, so a flow's packets are processed on a CPU other than its application's and its data crosses caches",
            i.name
        ),
        change: format!(
            "sysctl -w {name}={RFS_ENTRIES}; echo {} > /sys/class/net/{}/queues/rx-N/rps_flow_cnt for each of its {} receive queue(s)",
            RFS_ENTRIES / i.rx_queues.max(1) as u64,
            i.name,
            i.rx_queues
        ),
        ..on(&source, value, "rfs", Severity::Note, Confidence::Low)
    });
}

/// Several transmit queues with XPS off on a multi-CPU host.
fn xps(i: &Iface, cpus: usize, out: &mut Vec<Finding>) {
    if i.tx_queues < 2 || cpus < 2 || i.xps {
        return;
    }
    out.push(Finding {
        why: format!(
            "{} has {} transmit queues and XPS is off: a flow's queue is picked by hash, so CPUs contend for one queue's lock while another sits idle",
            i.name, i.tx_queues
        ),
        change: format!(
            "echo MASK > /sys/class/net/{}/queues/tx-N/xps_cpus   (each queue its own CPUs; all: {})",
            i.name,
            all_cpus(cpus)
        ),
        ..on(
            &format!("/sys/class/net/{}/queues/tx-0/xps_cpus", i.name),
            format!("0 on all {} transmit queues", i.tx_queues),
            "xps",
            Severity::Note,
            Confidence::Low,
        )
    });
}
