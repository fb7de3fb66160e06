//! The UDP stream's metrics: datagrams per second at both ends, loss, jitter and the CPU a
//! datagram costs.

use crate::metric::Metric;

/// Datagrams per second the receivers read.
pub const DATAGRAMS_PER_SECOND: Metric = Metric {
    name: "datagrams_per_second",
    label: "Datagrams/s",
    unit: "",
    run: Some(|r| Some(r.summary.udp()?.datagrams_per_second)),
    interval: Some(|iv| Some(iv.udp()?.datagrams_per_second)),
};

/// Datagrams per second the senders sent.
pub const SENDER_DATAGRAMS_PER_SECOND: Metric = Metric {
    name: "sender_datagrams_per_second",
    label: "Sender datagrams/s",
    unit: "",
    run: Some(|r| Some(r.summary.udp()?.sender_datagrams_per_second)),
    interval: None,
};

/// CPU ns per datagram on the controller's host.
pub const CPU_NS_PER_DATAGRAM_LOCAL: Metric = Metric {
    name: "cpu_ns_per_datagram_local",
    label: "CPU per datagram, local",
    unit: "ns",
    run: Some(|r| Some(r.summary.udp()?.cpu_ns_per_datagram.local)),
    interval: None,
};

/// Datagrams lost, when the sequence numbers tell.
pub const LOST_PERCENT: Metric = Metric {
    name: "lost_percent",
    label: "Datagrams lost",
    unit: "%",
    run: Some(|r| r.summary.udp()?.lost_percent),
    interval: None,
};

/// Interarrival jitter (RFC 3550), when the datagrams carry send times.
pub const JITTER_US: Metric = Metric {
    name: "jitter_us",
    label: "Jitter (RFC 3550)",
    unit: "µs",
    run: Some(|r| r.summary.udp()?.jitter_us),
    interval: None,
};

/// The kind's metrics, in the order a series lists them.
pub const METRICS: &[Metric] = &[
    DATAGRAMS_PER_SECOND,
    SENDER_DATAGRAMS_PER_SECOND,
    CPU_NS_PER_DATAGRAM_LOCAL,
    LOST_PERCENT,
    JITTER_US,
];
