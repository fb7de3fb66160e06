//! The members every figure of iperf3's `-J` document has (`json`'s intervals, `json_end`'s
//! streams and sums), and the one rule of its numbers: JSON holds no NaN or infinity.

use serde_json::{json, Value};

/// The members every iperf3 figure has: start, end, seconds, bytes, bits_per_second, sender.
pub fn figures(start: f64, end: f64, bytes: u64, sender: bool) -> Value {
    let seconds = (end - start).max(0.0);
    let bps = if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    };
    json!({"start": finite(start), "end": finite(end), "seconds": finite(seconds),
        "bytes": bytes, "bits_per_second": finite(bps), "sender": sender})
}

/// JSON holds no NaN or infinity.
pub fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_hold_the_rate_and_never_nan() {
        let f = figures(1.0, 3.0, 1000, true);
        assert_eq!(f["bits_per_second"], 4000.0);
        assert_eq!(figures(1.0, 1.0, 5, false)["bits_per_second"], 0.0);
    }
}
