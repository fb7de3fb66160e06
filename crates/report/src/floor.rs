//! The floor of the report crate: the arithmetic every figure is made with (rates, ratios, sums,
//! TCP counter deltas) and, in [`text`], how a figure is written in the terminal table and the
//! HTML page (rates, sizes, times, percentages). It imports nothing from the rest of the crate,
//! so every module can stand on it; rates and sizes are written by `fathom_units`, as everywhere
//! fathom writes them for people.

use fathom_proto::plan::KindId;
use fathom_proto::sample::TcpInfo;

/// Bits per second, 0 for an empty span.
pub fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// The sum of `values`, +0 when there are none (f64's `Sum` starts from -0.0, which prints
/// as "-0").
pub fn total(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |a, b| a + b)
}

/// a / b, 0 when b is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a.is_finite() {
        a / b
    } else {
        0.0
    }
}

/// Counters of `b` minus those of `a`; gauges (rtt, cwnd, rates) as in `b`.
pub fn tcp_delta(a: Option<TcpInfo>, b: Option<TcpInfo>) -> TcpInfo {
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    TcpInfo {
        retransmits: b.retransmits.saturating_sub(a.retransmits),
        segs_out: b.segs_out.wrapping_sub(a.segs_out),
        segs_in: b.segs_in.wrapping_sub(a.segs_in),
        data_segs_out: b.data_segs_out.wrapping_sub(a.data_segs_out),
        data_segs_in: b.data_segs_in.wrapping_sub(a.data_segs_in),
        busy_time_us: b.busy_time_us.saturating_sub(a.busy_time_us),
        rwnd_limited_us: b.rwnd_limited_us.saturating_sub(a.rwnd_limited_us),
        sndbuf_limited_us: b.sndbuf_limited_us.saturating_sub(a.sndbuf_limited_us),
        bytes_acked: b.bytes_acked.saturating_sub(a.bytes_acked),
        bytes_received: b.bytes_received.saturating_sub(a.bytes_received),
        bytes_retrans: b.bytes_retrans.saturating_sub(a.bytes_retrans),
        ..b
    }
}

/// Data segments the receiving socket got per pure ACK it sent; 0 (does not apply) for the
/// request/response kinds, whose ACKs ride on the answers: there the pure ACKs are a handful and
/// the ratio would be about the transaction count (segments per transaction tells their story).
pub fn segs_per_ack(kind: KindId, recv: &TcpInfo) -> f64 {
    if kind.is_request_response() {
        return 0.0;
    }
    let acks = recv.segs_out.saturating_sub(recv.data_segs_out);
    ratio(recv.data_segs_in as f64, acks as f64)
}

/// How a figure is written in the terminal table and the HTML page.
pub mod text {
    /// Bits per second with SI prefixes and four significant digits: "35.21 Gbit/s",
    /// "940.1 Mbit/s"; a negative or non-finite rate (which no figure should be) as 0.
    pub fn rate(bps: f64) -> String {
        let bps = if bps.is_finite() { bps.max(0.0) } else { 0.0 };
        fathom_units::rate::human(bps, 4)
    }

    /// Bytes in the largest 1024-based unit below them, whole or with one decimal: "512 B",
    /// "64 KB", "1.5 MB".
    pub fn human_bytes(n: u64) -> String {
        fathom_units::size::human(n)
    }

    /// A round-trip time: "140 µs" below a millisecond, "12.5 ms" above.
    pub fn rtt(us: f64) -> String {
        if us < 999.5 {
            format!("{us:.0} µs")
        } else {
            format!("{:.1} ms", us / 1000.0)
        }
    }

    /// A percentage with one decimal: "40.0%".
    pub fn pct(p: f64) -> String {
        format!("{p:.1}%")
    }

    /// Seconds without needless zeros: "3 s", "1.5 s", "0.25 s".
    pub fn secs(s: f64) -> String {
        let text = format!("{s:.2}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("{text} s")
    }

    /// "→" for a forward flow, "←" for a reverse one.
    pub fn arrow(direction: &str) -> &'static str {
        if direction == "reverse" {
            "←"
        } else {
            "→"
        }
    }

    /// A plain decimal (Rust's shortest exact form, never an exponent); 0 for a non-finite
    /// value.
    pub fn num(v: f64) -> String {
        if v.is_finite() {
            v.to_string()
        } else {
            "0".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::text::*;

    #[test]
    fn rates_have_four_significant_digits() {
        assert_eq!(rate(35.21e9), "35.21 Gbit/s");
        assert_eq!(rate(940.1e6), "940.1 Mbit/s");
        assert_eq!(rate(8.8e9), "8.800 Gbit/s");
        assert_eq!(rate(999.96e6), "1.000 Gbit/s");
        assert_eq!(rate(512.0), "512 bit/s");
        assert_eq!(rate(0.0), "0 bit/s");
        assert_eq!(rate(-3.0), "0 bit/s");
        assert_eq!(rate(f64::NAN), "0 bit/s");
    }

    #[test]
    fn seconds_and_rtts_read_naturally() {
        assert_eq!(secs(3.0), "3 s");
        assert_eq!(secs(1.5), "1.5 s");
        assert_eq!(secs(0.25), "0.25 s");
        assert_eq!(secs(0.0), "0 s");
        assert_eq!(rtt(140.0), "140 µs");
        assert_eq!(rtt(12_500.0), "12.5 ms");
    }
}
