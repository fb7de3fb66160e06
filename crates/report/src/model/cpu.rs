//! What the ends' CPUs did over a span, and what the bytes cost them (netperf's service
//! demand): the figures the summary, the hosts and every kind's section share.

use serde::{Deserialize, Serialize};

/// CPU of the two sides: the first client's host and the server's.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CpuPair {
    /// The (first) client's host: the controller's own in a single-agent test.
    pub local: Cpu,
    /// The server agent's host.
    pub remote: Cpu,
}

/// One host's CPU over a span: percentages of the whole host's capacity unless stated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Cpu {
    /// Busy, all causes.
    pub total: f64,
    /// User (and nice).
    pub user: f64,
    /// System.
    pub system: f64,
    /// Hardware interrupts.
    pub irq: f64,
    /// Software interrupts.
    pub softirq: f64,
    /// Stolen by the hypervisor.
    pub steal: f64,
    /// The busiest single CPU.
    pub busiest_cpu: CpuOne,
    /// Every CPU.
    pub per_cpu: Vec<CpuOne>,
    /// The process's user time (getrusage), seconds; misses softirq work done for it.
    pub process_user_s: f64,
    /// The process's system time, seconds.
    pub process_system_s: f64,
    /// CPU time of fathom's own threads for this end (workers and sampler), seconds.
    pub fathom_s: f64,
    /// The same as a percentage of the host's capacity.
    pub fathom_percent: f64,
    /// True when both ends ran in one process (embedded agent): process figures are shared.
    pub shared_process: bool,
    /// An iperf3 peer's own CPU figures, from its results: set only on the side fathom did not
    /// measure (a stock iperf3 at the far end), whose other figures are then not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iperf3: Option<PeerCpu>,
}

/// What an iperf3 peer says of its CPU (`cpu_util_total/user/system`): its process's CPU time as
/// a percentage of its wall time (one CPU busy = 100), not a share of the host; a figure it did
/// not send is absent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PeerCpu {
    /// User and system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// User.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<f64>,
    /// System.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<f64>,
}

/// One CPU's utilization.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CpuOne {
    /// CPU number.
    pub cpu: u32,
    /// Busy percent of that CPU.
    pub total: f64,
    /// Of which user.
    pub user: f64,
    /// Of which system.
    pub system: f64,
    /// Of which softirq.
    pub softirq: f64,
}

/// netperf's service demand on each end.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ServiceDemand {
    /// Controller's host.
    pub local: f64,
    /// Agent's host.
    pub remote: f64,
}
