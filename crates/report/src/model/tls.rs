//! The TLS section of a report: `test.tls` (the options as run) and `summary.tls` (what the
//! sessions negotiated and what encryption cost), present for TLS tests and `null` otherwise.

use super::cpu::ServiceDemand;
use serde::{Deserialize, Serialize};

/// The TLS options as run (`test.tls`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TlsTest {
    /// The version offered: "1.2" or "1.3".
    pub version: String,
    /// The one cipher offered ("aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"), or `null`
    /// for the library's order.
    pub cipher: Option<String>,
    /// Largest plaintext per record, bytes.
    pub record_size: u32,
}

/// What the TLS sessions negotiated and cost (`summary.tls`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TlsSummary {
    /// Negotiated version ("1.2", "1.3"); empty when no handshake completed.
    pub version: String,
    /// Negotiated suite, IANA name (e.g. "TLS13_AES_256_GCM_SHA384").
    pub suite: String,
    /// Largest plaintext per record, bytes.
    pub record_size: u32,
    /// Connections set up before the start (stream, rr): the handshakes as the connecting
    /// side(s) timed them (`null` for crr, whose handshakes are inside its transactions).
    pub handshake_us: Option<HandshakeTimes>,
    /// crr: full handshakes per second (one per transaction).
    pub handshakes_per_second: Option<f64>,
    /// Application bytes the flows' sockets received, both ends, over the whole test (`null`
    /// for crr).
    pub application_bytes: Option<u64>,
    /// TCP payload bytes those sockets received (TCP_INFO bytes_received): records, their
    /// headers and tags, and the handshakes.
    pub wire_bytes: Option<u64>,
    /// (wire − application) / application, %.
    pub overhead_pct: Option<f64>,
    /// Stream: busy CPU seconds per GB (10^9 bytes) of application data received, on each
    /// host (`null` for the request/response kinds: their CPU per transaction is in `rr`).
    pub cpu_s_per_gb: Option<ServiceDemand>,
}

/// Handshake times over the connections, µs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct HandshakeTimes {
    /// How many.
    pub count: u32,
    /// Their mean.
    pub mean: f64,
    /// The longest.
    pub max: f64,
}
