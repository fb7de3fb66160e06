//! What the advisor knows of a host: a plain snapshot, filled by [`crate::read`] (or by a test),
//! with every value kept as read so that findings can cite it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The socket buffer sysctls (core and TCP, limits and defaults): the advisor reads them, and
/// fathom keeps them with every stored run.
pub const BUFFER_SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

/// The other sysctls the advisor reads.
const OTHER_SYSCTLS: &[&str] = &[
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.ipv4.tcp_congestion_control",
    "net.core.default_qdisc",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.core.somaxconn",
    "net.core.rps_sock_flow_entries",
    "fs.nr_open",
];

/// The sysctls the advisor reads, by name (read from /proc/sys/NAME with dots as slashes).
pub fn sysctl_names() -> impl Iterator<Item = &'static str> {
    BUFFER_SYSCTLS.iter().chain(OTHER_SYSCTLS).copied()
}

/// A host's settings, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The sysctls of [`sysctl_names`] that could be read: name -> value (whitespace collapsed).
    pub sysctls: BTreeMap<String, String>,
    /// The network interfaces looked at (loopback excluded).
    pub ifaces: Vec<Iface>,
    /// CPUs online.
    pub cpus: usize,
    /// scaling_governor per CPU that has one: CPU number -> governor.
    pub governors: BTreeMap<usize, String>,
    /// CPU 0's idle states (cpuidle), shallowest first.
    pub idle_states: Vec<IdleState>,
    /// NUMA nodes (0 if /sys/devices/system/node is absent).
    pub numa_nodes: usize,
    /// RLIMIT_NOFILE of the reading process: (soft, hard), if known.
    pub nofile: Option<(u64, u64)>,
    /// Whether `ethtool` could be run; without it, offloads are not known.
    pub ethtool: bool,
}

/// One network interface.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iface {
    /// Its name.
    pub name: String,
    /// Its MTU, if readable.
    pub mtu: Option<u32>,
    /// Receive queues (queues/rx-*).
    pub rx_queues: usize,
    /// Whether any receive queue's rps_cpus mask has a CPU set.
    pub rps: bool,
    /// Its interrupts (/proc/interrupts lines that name it): IRQ number -> the CPUs it may run
    /// on (/proc/irq/N/smp_affinity_list, as read).
    pub irqs: BTreeMap<u32, String>,
    /// Its offloads from `ethtool -k`, if ethtool ran.
    pub offloads: Option<Offloads>,
    /// Transmit queues (queues/tx-*).
    pub tx_queues: usize,
    /// Whether any transmit queue's xps_cpus mask has a CPU set.
    pub xps: bool,
    /// The RFS flow table entries summed over its receive queues (queues/rx-*/rps_flow_cnt).
    pub rps_flow_cnt: u64,
    /// Its RX ring from `ethtool -g`: (current, pre-set maximum), if ethtool told.
    pub ring_rx: Option<(u64, u64)>,
    /// Its receive channels from `ethtool -l`: (current, pre-set maximum) of the combined
    /// channels, or of the RX ones on a NIC without combined ones, if ethtool told.
    pub channels: Option<(u64, u64)>,
    /// True when `ethtool` was not run on it because the read's time budget was spent on the
    /// interfaces before it (its offloads, ring and channels are then unknown).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ethtool_unread: bool,
}

/// Offload features as `ethtool -k` prints them: feature -> (on, fixed).
pub type Offloads = BTreeMap<String, (bool, bool)>;

/// One cpuidle state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// Its name (C1, C6, ...).
    pub name: String,
    /// Its exit latency in µs.
    pub latency_us: u64,
    /// Whether it is disabled.
    pub disabled: bool,
}

impl Settings {
    /// The raw value of sysctl `name`, if read.
    pub fn sysctl(&self, name: &str) -> Option<&str> {
        self.sysctls.get(name).map(String::as_str)
    }

    /// Sysctl `name` as one number, if read and numeric.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.sysctl(name)?.trim().parse().ok()
    }

    /// Sysctl `name` as a triple (min, default, max), as tcp_rmem and tcp_wmem are.
    pub fn triple(&self, name: &str) -> Option<[u64; 3]> {
        let v: Vec<u64> = self
            .sysctl(name)?
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        v.try_into().ok()
    }
}
