//! The sockets over the window: their buffers as asked for, granted and at the end, and the
//! TCP internals of all the flows.

use serde::{Deserialize, Serialize};

/// Socket buffer sizes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Buffers {
    /// What was asked for.
    pub requested: BufferRequest,
    /// SO_SNDBUF the kernel granted the sending sockets (bytes, as getsockopt reports it).
    pub effective_send: u64,
    /// SO_RCVBUF the kernel granted the receiving sockets.
    pub effective_recv: u64,
    /// SO_SNDBUF of the sending sockets at the end (autotuning grows it).
    pub final_send: u64,
    /// SO_RCVBUF of the receiving sockets at the end.
    pub final_recv: u64,
    /// True when a sysctl cut a request short.
    pub clamped: bool,
}

/// Requested socket buffer sizes; `null` means kernel autotuning.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct BufferRequest {
    /// SO_SNDBUF request.
    pub send: Option<u64>,
    /// SO_RCVBUF request.
    pub recv: Option<u64>,
}

/// TCP internals over the window, over all flows.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TcpSummary {
    /// Mean smoothed RTT of the sending sockets at the window's end, µs.
    pub rtt_us: f64,
    /// Mean RTT variation, µs.
    pub rttvar_us: f64,
    /// Data segments received per ACK sent, at the receivers.
    pub data_segs_per_ack: f64,
    /// Share of the window the senders were limited by the peer's receive window, %.
    pub rwnd_limited_pct: f64,
    /// Share of the window the senders were limited by their send buffer, %.
    pub sndbuf_limited_pct: f64,
    /// Share of the window the senders had data in flight, %.
    pub busy_pct: f64,
}
