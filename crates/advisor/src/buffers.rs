//! Rules on socket buffers and TCP: the buffer ceilings and defaults, window scaling,
//! autotuning, congestion control, the default qdisc, busy polling and the listen backlog.

use crate::{Confidence, Finding, Settings, Severity};
use fathom_units::{rate, size};

/// Below this a buffer ceiling limits one stream on a long path (docs/advisor.md).
pub const BUFFER_MIN: u64 = 4 << 20;
/// The ceiling recommended instead: 64 MB, a window for 5 Gbit/s at 100 ms.
pub const BUFFER_ADVISED: u64 = 64 << 20;
/// The usual net.core.rmem_default; below it UDP receivers drop bursts.
pub const RMEM_DEFAULT_MIN: u64 = 212_992;
/// Below this listen backlog, bursts of connections are dropped.
pub const SOMAXCONN_MIN: u64 = 1024;

/// A finding read from `name` (a sysctl, path or command), whose value is `value`.
pub(crate) fn on(
    name: &str,
    value: String,
    id: &'static str,
    sev: Severity,
    conf: Confidence,
) -> Finding {
    Finding {
        id,
        severity: sev,
        value,
        source: name.to_string(),
        why: String::new(),
        change: String::new(),
        confidence: conf,
    }
}

/// What a window of `bytes` allows one stream at 100 ms and 10 ms.
fn bdp(bytes: u64) -> String {
    format!(
        "a window of {} lets one stream carry at most {} over a 100 ms path (window x 8 / RTT), {} at 10 ms",
        size::human(bytes),
        rate::human(window_rate(bytes, 100), 3),
        rate::human(window_rate(bytes, 10), 3),
    )
}

/// The findings on socket buffers and TCP.
pub fn findings(s: &Settings) -> Vec<Finding> {
    let mut out = Vec::new();
    ceilings(s, &mut out);
    tcp(s, &mut out);
    others(s, &mut out);
    out
}

/// rmem_max, wmem_max, the tcp_rmem/tcp_wmem triples and rmem_default.
fn ceilings(s: &Settings, out: &mut Vec<Finding>) {
    for (name, id, what) in [
        ("net.core.rmem_max", "rmem_max", "receive"),
        ("net.core.wmem_max", "wmem_max", "send"),
    ] {
        let Some(v) = s.number(name) else { continue };
        if v < BUFFER_MIN {
            out.push(Finding {
                why: format!(
                    "a socket that sets its {what} buffer (fathom --buffer, iperf3 -w) is clamped to {}: {}",
                    size::human(v),
                    bdp(v)
                ),
                change: format!("sysctl -w {name}={BUFFER_ADVISED}"),
                ..on(name, v.to_string(), id, Severity::Warning, Confidence::High)
            });
        }
    }
    for (name, id, what) in [
        ("net.ipv4.tcp_rmem", "tcp_rmem", "receive"),
        ("net.ipv4.tcp_wmem", "tcp_wmem", "send"),
    ] {
        let Some([min, def, max]) = s.triple(name) else {
            continue;
        };
        let value = format!("{min} {def} {max}");
        let change = format!("sysctl -w {name}='{min} {def} {}'", max.max(BUFFER_ADVISED));
        if min > def || def > max {
            out.push(Finding {
                why: "the three values must be min <= default <= max; the kernel's use of them is undefined otherwise".into(),
                change: format!("sysctl -w {name}='4096 131072 {BUFFER_ADVISED}'"),
                ..on(
                    name,
                    value,
                    "tcp_buffers_order",
                    Severity::Warning,
                    Confidence::High,
                )
            });
        } else if max < BUFFER_MIN {
            out.push(Finding {
                why: format!(
                    "autotuning grows a TCP {what} buffer up to the third value, {}: {}",
                    size::human(max),
                    bdp(max)
                ),
                change,
                ..on(name, value, id, Severity::Warning, Confidence::High)
            });
        }
    }
    if let Some(v) = s
        .number("net.core.rmem_default")
        .filter(|&v| v < RMEM_DEFAULT_MIN)
    {
        let name = "net.core.rmem_default";
        out.push(Finding {
            why: format!(
                "UDP sockets that do not set SO_RCVBUF get {}: a burst beyond it is dropped in the socket buffer (RcvbufErrors)",
                size::human(v)
            ),
            change: format!("sysctl -w {name}={RMEM_DEFAULT_MIN}"),
            ..on(
                name,
                v.to_string(),
                "rmem_default",
                Severity::Note,
                Confidence::Medium,
            )
        });
    }
}

/// Window scaling, receive-buffer autotuning and congestion control.
fn tcp(s: &Settings, out: &mut Vec<Finding>) {
    let name = "net.ipv4.tcp_window_scaling";
    if s.number(name) == Some(0) {
        out.push(Finding {
            why: format!(
                "without window scaling a TCP window stops at 64 KB: {}",
                bdp(65_535)
            ),
            change: format!("sysctl -w {name}=1"),
            ..on(
                name,
                "0".into(),
                "tcp_window_scaling",
                Severity::Warning,
                Confidence::High,
            )
        });
    }
    let name = "net.ipv4.tcp_moderate_rcvbuf";
    if s.number(name) == Some(0) {
        let def = s.triple("net.ipv4.tcp_rmem").map_or(131_072, |t| t[1]);
        out.push(Finding {
            why: format!(
                "receive-buffer autotuning is off: a TCP receive buffer stays at net.ipv4.tcp_rmem's default, {}: {}",
                size::human(def),
                bdp(def)
            ),
            change: format!("sysctl -w {name}=1"),
            ..on(
                name,
                "0".into(),
                "tcp_moderate_rcvbuf",
                Severity::Warning,
                Confidence::High,
            )
        });
    }
    let name = "net.ipv4.tcp_congestion_control";
    if let Some(cc) = s.sysctl(name).filter(|&cc| cc == "reno") {
        out.push(Finding {
            why: "reno grows the window by one segment per RTT and halves it on each loss: on a long fat path it takes minutes to recover".into(),
            change: format!("sysctl -w {name}=cubic   (or bbr, after modprobe tcp_bbr)"),
            ..on(
                name,
                cc.into(),
                "congestion_control",
                Severity::Warning,
                Confidence::Medium,
            )
        });
    }
}

/// The default qdisc, busy polling and the listen backlog.
fn others(s: &Settings, out: &mut Vec<Finding>) {
    let name = "net.core.default_qdisc";
    if let Some(q) = s.sysctl(name).filter(|&q| q == "pfifo_fast") {
        out.push(Finding {
            why: "pfifo_fast neither paces nor keeps queues short: a bulk flow adds its queue to every other flow's latency".into(),
            change: format!("sysctl -w {name}=fq   (fq_codel also keeps queues short)"),
            ..on(
                name,
                q.into(),
                "default_qdisc",
                Severity::Note,
                Confidence::Low,
            )
        });
    }
    let (poll, read) = (
        s.number("net.core.busy_poll"),
        s.number("net.core.busy_read"),
    );
    if poll == Some(0) && read == Some(0) {
        let mut f = on(
            "net.core.busy_poll",
            "0".into(),
            "busy_poll",
            Severity::Note,
            Confidence::Low,
        );
        f.source = "net.core.busy_poll, net.core.busy_read".into();
        f.why = "busy polling is off: a request/response test (fathom rr) sleeps and is woken for every message, which adds microseconds per transaction; polling trades CPU for that latency".into();
        f.change = "sysctl -w net.core.busy_read=50 net.core.busy_poll=50".into();
        out.push(f);
    }
    let name = "net.core.somaxconn";
    if let Some(v) = s.number(name).filter(|&v| v < SOMAXCONN_MIN) {
        out.push(Finding {
            why: format!(
                "a listening socket's backlog is capped at {v}: a burst of new connections (fathom crr, many flows) beyond it is dropped and retried after 1 s"
            ),
            change: format!("sysctl -w {name}=4096"),
            ..on(
                name,
                v.to_string(),
                "somaxconn",
                Severity::Warning,
                Confidence::Medium,
            )
        });
    }
}

/// The largest rate (bit/s) one stream reaches with a window of `bytes` over a path of `rtt_ms`.
fn window_rate(bytes: u64, rtt_ms: u64) -> f64 {
    bytes as f64 * 8.0 * 1000.0 / rtt_ms.max(1) as f64
}
