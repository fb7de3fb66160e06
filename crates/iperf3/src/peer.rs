//! What the other end's results message says (the iperf3 client's, when fathom serves; the
//! iperf3 server's, when fathom is the client), bounded where it is read: [`bounded`] once on
//! the message as it arrives, then [`Peer::read`] for the figures fathom uses.
//!
//! iperf3 writes its "unknown" (-1) as an unsigned 64-bit number (18446744073709551615), so a
//! count beyond what a test can move is unknown, as is anything negative: null in the message,
//! `None` here, never 2^64-1 in fathom's output.

use super::results::stream_id;
use fathom_report::model::PeerCpu;
use serde_json::Value;

/// The largest number taken from a peer: 2^55 (36 PB, or a datagram count a test never
/// reaches), small enough that the sum over 256 streams fits in 64 bits.
pub const PEER_MAX: u64 = 1 << 55;
/// The longest string taken from a peer (a congestion control's name has at most 15 bytes).
const PEER_STRING_MAX: usize = 64;
/// The largest CPU percentage taken from a peer: its process's share of its wall time, which
/// passes 100 only with several threads busy.
const PEER_CPU_MAX: f64 = 100.0 * 4096.0;

/// `message` with every number that is negative or beyond [`PEER_MAX`], and every string
/// longer than [`PEER_STRING_MAX`] bytes, replaced by null.
pub fn bounded(message: Value) -> Value {
    match message {
        Value::Number(n) if !in_range(&n) => Value::Null,
        Value::String(s) if s.len() > PEER_STRING_MAX => Value::Null,
        Value::Array(items) => Value::Array(items.into_iter().map(bounded).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, bounded(v))).collect())
        }
        other => other,
    }
}

/// Whether `n` is in 0..=[`PEER_MAX`].
fn in_range(n: &serde_json::Number) -> bool {
    match n.as_u64() {
        Some(v) => v <= PEER_MAX,
        None => {
            n.is_f64()
                && n.as_f64()
                    .is_some_and(|x| (0.0..=PEER_MAX as f64).contains(&x))
        }
    }
}

/// One stream's figures in a peer's results; `None` where it gave none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeerStream {
    /// Bytes it sent or received.
    pub bytes: Option<u64>,
    /// Retransmits, where it sent on TCP and says it can count them.
    pub retransmits: Option<u64>,
    /// UDP: datagrams it sent, or the highest sequence number it received.
    pub packets: Option<u64>,
    /// UDP: datagrams it did not receive (iperf3's `errors`).
    pub lost: Option<u64>,
    /// UDP: the jitter it measured, seconds.
    pub jitter_s: Option<f64>,
}

/// A peer's results message, as fathom uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Peer {
    /// Its CPU (`cpu_util_*`).
    pub cpu: PeerCpu,
    /// The congestion control it used (`congestion_used`).
    pub congestion: Option<String>,
    /// Per stream, by fathom's index (iperf3 id 1, 3, 4...).
    pub streams: Vec<PeerStream>,
}

impl Peer {
    /// The figures of `n` streams in the bounded `message`.
    pub fn read(message: &Value, n: usize) -> Peer {
        let cpu = |key: &str| {
            message
                .get(key)
                .and_then(Value::as_f64)
                .filter(|v| (0.0..=PEER_CPU_MAX).contains(v))
        };
        let counts_retransmits = message.get("sender_has_retransmits") == Some(&Value::from(1));
        let mut streams = vec![PeerStream::default(); n];
        let listed = message.get("streams").and_then(Value::as_array);
        for s in listed.into_iter().flatten().take(n.saturating_mul(2)) {
            let Some(id) = s.get("id").and_then(Value::as_u64) else {
                continue;
            };
            let Some(slot) = (0..n).find(|&i| stream_id(i) == id) else {
                continue;
            };
            let count = |key: &str| s.get(key).and_then(Value::as_u64);
            streams[slot] = PeerStream {
                bytes: count("bytes"),
                retransmits: count("retransmits").filter(|_| counts_retransmits),
                packets: count("packets"),
                lost: count("errors"),
                jitter_s: s.get("jitter").and_then(Value::as_f64),
            };
        }
        Peer {
            cpu: PeerCpu {
                total: cpu("cpu_util_total"),
                user: cpu("cpu_util_user"),
                system: cpu("cpu_util_system"),
            },
            congestion: message
                .get("congestion_used")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_graphic()))
                .map(str::to_string),
            streams,
        }
    }

    /// The bytes the peer says it moved on each stream (`u64::MAX` where it says nothing: a
    /// receiver then drains until the stream closes).
    pub fn bytes(&self) -> Vec<u64> {
        self.streams
            .iter()
            .map(|s| s.bytes.unwrap_or(u64::MAX))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn iperf3s_unknown_and_anything_out_of_range_become_null() {
        let m = bounded(json!({"sender_has_retransmits": 18446744073709551615u64,
            "streams": [{"id": 1, "bytes": 5, "retransmits": -1, "jitter": 0.5,
                "errors": 1e300, "packets": 36028797018963969u64}],
            "congestion_used": "x".repeat(65), "cpu_util_total": 12.5}));
        assert_eq!(
            m,
            json!({"sender_has_retransmits": null,
                "streams": [{"id": 1, "bytes": 5, "retransmits": null, "jitter": 0.5,
                    "errors": null, "packets": null}],
                "congestion_used": null, "cpu_util_total": 12.5})
        );
    }

    #[test]
    fn reads_each_streams_figures_by_id() {
        let m = bounded(
            json!({"sender_has_retransmits": 1, "congestion_used": "cubic",
            "streams": [{"id": 3, "bytes": 7, "retransmits": 2},
                {"id": 1, "bytes": 5, "retransmits": -1, "packets": 9, "errors": 1, "jitter": 0.25},
                {"id": 9, "bytes": 1}, {"id": "x"}]}),
        );
        let p = Peer::read(&m, 3);
        assert_eq!(p.congestion.as_deref(), Some("cubic"));
        assert_eq!(p.bytes(), [5, 7, u64::MAX]);
        assert_eq!(p.streams[1].retransmits, Some(2));
        assert_eq!(p.streams[0].retransmits, None);
        let s = &p.streams[0];
        assert_eq!(
            (s.packets, s.lost, s.jitter_s),
            (Some(9), Some(1), Some(0.25))
        );
        assert_eq!(Peer::read(&json!(null), 1).bytes(), [u64::MAX]);
    }

    #[test]
    fn retransmits_count_only_when_the_peer_says_it_counts_them() {
        let m = json!({"sender_has_retransmits": 0, "streams": [{"id": 1, "retransmits": 0}]});
        assert_eq!(Peer::read(&m, 1).streams[0].retransmits, None);
    }

    #[test]
    fn reads_only_the_cpu_figures_the_peer_gave() {
        let r = json!({"cpu_util_total": 12.5, "cpu_util_user": -1, "cpu_util_system": "x"});
        let c = Peer::read(&r, 0).cpu;
        assert_eq!((c.total, c.user, c.system), (Some(12.5), None, None));
        assert_eq!(
            Peer::read(&json!({"cpu_util_total": 1e300}), 0).cpu.total,
            None
        );
        assert_eq!(Peer::read(&json!(null), 0).cpu, PeerCpu::default());
    }
}
