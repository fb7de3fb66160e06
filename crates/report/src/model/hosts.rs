//! The hosts of a report: each host's facts and figures with its threads, the groups of client
//! hosts, and the lab's WAN emulator links the test crossed.

use super::cpu::Cpu;
use serde::{Deserialize, Serialize};

/// The client hosts of one group, together: the cluster aggregate of their flows.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct GroupResult {
    /// The group's name (a hostfile's `group=`, a Kubernetes zone or node).
    pub name: String,
    /// Its client hosts.
    pub hosts: u32,
    /// Bytes received on its hosts' flows over the whole run.
    pub bytes: u64,
    /// Their first byte sent to their last byte received, seconds.
    pub seconds: f64,
    /// `bytes` over `seconds`, bits/s.
    pub bits_per_second: f64,
}

/// One host of the test: the server first, then the clients.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct HostResult {
    /// How the user named it ("h2", "10.0.0.2:5301"; "local" for the controller's own end).
    pub name: String,
    /// "server" or "client".
    pub role: String,
    /// True for the controller's own end, run inside the fathom process.
    pub in_process: bool,
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// CPUs online.
    pub cpus: u32,
    /// fathom's version there.
    pub version: String,
    /// How the workers waited ("epoll" or "busy-poll").
    pub wait: String,
    /// Bytes per read call it used.
    pub read_size: u32,
    /// Where each worker thread ran.
    pub threads: Vec<ThreadResult>,
    /// net.core.rmem_max.
    pub rmem_max: u64,
    /// net.core.wmem_max.
    pub wmem_max: u64,
    /// Receivers' throughput of the flows this host took part in, bits/s.
    pub bits_per_second: f64,
    /// Senders' throughput of those flows, bits/s.
    pub sender_bits_per_second: f64,
    /// Bytes received on those flows in the window.
    pub bytes: u64,
    /// Request/response kinds: transactions per second of those flows; `None` for the others.
    pub transactions_per_second: Option<f64>,
    /// This host's CPU over its window.
    pub cpu: Cpu,
    /// Its clock minus the controller's, µs (0 for the controller's own end).
    pub clock_offset_us: f64,
    /// Round trip of the best clock probe, µs.
    pub control_rtt_us: f64,
    /// When its first payload byte went out, µs after the common start (none if it sent nothing).
    pub first_send_us: Option<f64>,
    /// CPU fathom spent measuring on this host (snapshots, TCP_INFO, /proc/stat), seconds.
    pub measurement_cpu_s: f64,
    /// The same as a percentage of the host's capacity over the test.
    pub measurement_percent: f64,
    /// Set when this host failed.
    pub error: Option<String>,
    /// Its group (a hostfile's `group=`, a Kubernetes zone or node); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// One worker thread.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ThreadResult {
    /// CPU it was pinned to.
    pub pinned_cpu: Option<u32>,
    /// CPU it last ran on.
    pub last_cpu: u32,
    /// Flows it served.
    pub flows: u32,
    /// CPU time it used, seconds.
    pub cpu_s: f64,
}

/// One WAN emulator link of the lab the test ran in: its parameters, and its counters before and
/// after the test (the difference is what this test sent through it).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct WanLinkResult {
    /// The link's name, e.g. `h1-h2`.
    pub name: String,
    /// The nodes it joins, A then B.
    pub ends: [String; 2],
    /// Parameters for frames from A to B, in full text form (`delay=25ms,jitter=0s,...`).
    pub a_to_b: String,
    /// Parameters for frames from B to A.
    pub b_to_a: String,
    /// The emulator's counters before the test (as `fathom lab status --json` shows them).
    pub counters_before: Option<serde_json::Value>,
    /// Its counters after the test.
    pub counters_after: Option<serde_json::Value>,
    /// CPU seconds the link's user-space forwarder used over the test, on the machine the lab's
    /// hosts share: their CPU figures include it, `cpu_s_per_gb` leaves it out.
    #[serde(default)]
    pub forwarder_cpu_s: Option<f64>,
}

/// IPsec on the lab links the test crossed (`lab up --ipsec`): the suite, where ESP ran (in
/// the kernel, or in user space: strongSwan's charon, not fathom, then does the crypto), each
/// link's SA counters before and after the test, and the CPU the lab's charons used meanwhile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct IpsecResult {
    /// The cipher suite, e.g. `aes-256-gcm`.
    pub suite: String,
    /// `kernel` or `userspace`.
    pub datapath: String,
    /// Each encrypted link.
    pub links: Vec<IpsecLinkResult>,
    /// CPU seconds every charon of the lab used over the test, on the machine the lab's hosts
    /// share (with user-space ESP, the encryption itself).
    pub charon_cpu_s: Option<f64>,
}

/// One encrypted link: its SAs before and after the test, as `fathom lab status --json` shows
/// them (`bytes_in`, `bytes_out`, `packets_in`, `packets_out`, ... of its first end).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct IpsecLinkResult {
    /// The link's name, e.g. `h1-h2`.
    pub name: String,
    /// Its SAs before the test.
    pub sa_before: Option<serde_json::Value>,
    /// Its SAs after the test.
    pub sa_after: Option<serde_json::Value>,
}

impl IpsecLinkResult {
    /// Bytes the SAs carried over the test, out and in (0 where a count is missing).
    pub fn bytes(&self) -> (u64, u64) {
        let n = |v: &Option<serde_json::Value>, k: &str| {
            v.as_ref().and_then(|v| v[k].as_u64()).unwrap_or(0)
        };
        let d = |k: &str| n(&self.sa_after, k).saturating_sub(n(&self.sa_before, k));
        (d("bytes_out"), d("bytes_in"))
    }
}
