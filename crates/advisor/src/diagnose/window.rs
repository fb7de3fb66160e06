//! The window and buffer causes: a `--buffer` request cut by net.core.{rmem,wmem}_max; a
//! receive window that capped the rate at window / RTT, fixed by `--buffer` below the path's
//! bandwidth-delay product or stopped by autotuning at net.ipv4.tcp_rmem's maximum; a window
//! short of that maximum that the receiver did not open (with a full receiving CPU that is
//! `cpu.rs`'s cause); and a send buffer that held the senders back.

use super::found::{link_rate, ms, pct, receiver_of, Found};
use crate::{Confidence, Settings, Severity};
use fathom_report::model::{FlowResult, Report};
use fathom_report::warnings::LIMITED_PCT;
use fathom_units::{rate, size};

/// A window is the bound when the rate reached this share of window / RTT.
const NEAR_CAP: f64 = 0.5;
/// The rate a buffer is sized for when no WAN link says the path's rate, bits/s.
const DEFAULT_TARGET_BPS: f64 = 1e9;

/// The window and buffer findings of run `r`.
pub(super) fn findings(r: &Report, s: &Settings) -> Vec<Found> {
    let mut out = clamped(r, s);
    out.extend(receive_window(r, s));
    out.extend(send_buffer(r, s));
    out
}

/// A `--buffer` (`--rcvbuf`, `--sndbuf`) request above net.core.{rmem,wmem}_max: from the
/// report's own verdict (`buffers.clamped`, with the hosts' limits at run time), else from the
/// limit in the settings read on the host.
fn clamped(r: &Report, s: &Settings) -> Vec<Found> {
    let t = &r.test;
    let wants = [
        (t.rcvbuf, "rmem", "SO_RCVBUF"),
        (t.sndbuf, "wmem", "SO_SNDBUF"),
    ];
    let mut out = Vec::new();
    for (req, mem, opt) in wants {
        let Some(req) = req.map(u64::from) else {
            continue;
        };
        let at_run = r
            .hosts
            .iter()
            .map(|h| {
                if mem == "rmem" {
                    h.rmem_max
                } else {
                    h.wmem_max
                }
            })
            .filter(|&m| m > 0 && m < req)
            .min()
            .filter(|_| r.summary.buffers.clamped);
        let sysctl = format!("net.core.{mem}_max");
        let (max, place) = match (at_run, s.number(&sysctl).filter(|&m| m < req)) {
            (Some(m), _) => (m, "on the run's hosts"),
            (None, Some(m)) => (m, "in this host's settings"),
            (None, None) => continue,
        };
        out.push(Found {
            id: "buffer_clamped",
            severity: Severity::Warning,
            confidence: Confidence::High,
            seen: format!(
                "--buffer asked for {opt} of {} but {sysctl} is {max} ({}) {place}",
                size::human(req),
                size::human(max)
            ),
            figures: vec![("requested_bytes", req as f64), ("limit_bytes", max as f64)],
            why: format!(
                "a request above {sysctl} is cut to it without an error, so the buffer, and with it the window and one stream's rate (window / RTT), stay at {} whatever --buffer says",
                size::human(max)
            ),
            change: format!("sysctl -w {sysctl}={req}"),
        });
    }
    out
}

/// The flow most limited by the receive window, when the window's arithmetic says it was the
/// bound: limited more than [`LIMITED_PCT`] of the time, and its rate at least [`NEAR_CAP`]
/// of window x 8 / RTT.
fn receive_window(r: &Report, s: &Settings) -> Option<Found> {
    let f = most_limited(r, |f| f.rwnd_limited_pct)?;
    let window = match f.window {
        0 => u64::from(f.rcvbuf_end) / 2,
        w => u64::from(w),
    };
    let cap = bound(f, window as f64)?;
    let seen = format!(
        "flow {} was limited by the receive window {} of the time; its window was {} and its RTT {}, so it could carry at most {} (window x 8 / RTT); it got {}",
        f.id,
        pct(f.rwnd_limited_pct),
        size::human(window),
        ms(f64::from(f.rtt_us)),
        rate::human(cap, 3),
        rate::human(f.transfer.bits_per_second, 3)
    );
    let figures = vec![
        ("rwnd_limited_pct", f.rwnd_limited_pct),
        ("window_bytes", window as f64),
        ("rtt_us", f64::from(f.rtt_us)),
        ("bits_per_second", f.transfer.bits_per_second),
        ("window_cap_bps", cap),
    ];
    let max = s.triple("net.ipv4.tcp_rmem").map(|t| t[2]);
    match r.test.rcvbuf {
        Some(req) => Some(requested(r, f, u64::from(req), seen, figures)),
        None if max.is_some_and(|m| u64::from(f.rcvbuf_end) >= m) => {
            Some(autotuning(f, max.unwrap_or(0), seen, figures))
        }
        None => receiver_slow(r, f, max, seen, figures),
    }
}

/// The flow limited by `share` (its receive window's or its send buffer's share of the time)
/// the most, if that was more than [`LIMITED_PCT`] of the time.
fn most_limited(r: &Report, share: fn(&FlowResult) -> f64) -> Option<&FlowResult> {
    r.flows
        .iter()
        .filter(|f| share(f) > LIMITED_PCT)
        .max_by(|a, b| share(a).total_cmp(&share(b)))
}

/// The most flow `f` could carry with `bytes` in flight per RTT (bytes x 8 / RTT), bits/s, when
/// that bound held: `bytes` and the RTT known, and the flow's rate at least [`NEAR_CAP`] of it.
fn bound(f: &FlowResult, bytes: f64) -> Option<f64> {
    if bytes == 0.0 || f.rtt_us == 0 {
        return None;
    }
    let cap = bytes * 8.0 * 1e6 / f64::from(f.rtt_us);
    if f.transfer.bits_per_second < NEAR_CAP * cap {
        return None;
    }
    Some(cap)
}

/// The bandwidth-delay product of the path for flow `f`: the WAN link's rate (else
/// [`DEFAULT_TARGET_BPS`]) x its RTT, bytes; and that rate.
fn bdp(r: &Report, f: &FlowResult) -> (u64, f64) {
    let target = link_rate(r).unwrap_or(DEFAULT_TARGET_BPS);
    ((target * f64::from(f.rtt_us) / 8e6).ceil() as u64, target)
}

/// The window `--buffer` fixed, below the path's BDP.
fn requested(
    r: &Report,
    f: &FlowResult,
    req: u64,
    seen: String,
    mut figures: Vec<(&'static str, f64)>,
) -> Found {
    let (bdp, target) = bdp(r, f);
    figures.push(("bdp_bytes", bdp as f64));
    let k = bdp.div_ceil(1024).max(1);
    Found {
        id: "receive_window",
        severity: Severity::Warning,
        confidence: Confidence::High,
        seen,
        figures,
        why: format!(
            "--buffer {} set the receive buffer, which turns autotuning off for the socket, and it is below the path's bandwidth-delay product ({} x {} = {}): one stream cannot keep more than a window in flight per round trip",
            size::human(req),
            rate::human(target, 3),
            ms(f64::from(f.rtt_us)),
            size::human(bdp)
        ),
        change: format!(
            "--buffer {k}K (at least the BDP; raise net.core.rmem_max and wmem_max to it if they are lower), or leave --buffer out to let autotuning grow the window"
        ),
    }
}

/// Autotuning stopped at net.ipv4.tcp_rmem's maximum `max`, which the buffer reached.
fn autotuning(
    f: &FlowResult,
    max: u64,
    seen: String,
    mut figures: Vec<(&'static str, f64)>,
) -> Found {
    figures.push(("tcp_rmem_max_bytes", max as f64));
    figures.push(("rcvbuf_end_bytes", f64::from(f.rcvbuf_end)));
    Found {
        id: "autotuning_max",
        severity: Severity::Warning,
        confidence: Confidence::High,
        seen,
        figures,
        why: format!(
            "the receive buffer grew to net.ipv4.tcp_rmem's maximum ({}) and autotuning stops there",
            size::human(max)
        ),
        change: format!(
            "sysctl -w net.ipv4.tcp_rmem='4096 131072 {}' (or set --buffer to the path's BDP)",
            max.saturating_mul(4).max(64 << 20)
        ),
    }
}

/// A window short of autotuning's maximum with no full receiving CPU: the receiver did not
/// read fast enough; with a full CPU, `cpu.rs` names it, so nothing here.
fn receiver_slow(
    r: &Report,
    f: &FlowResult,
    max: Option<u64>,
    seen: String,
    mut figures: Vec<(&'static str, f64)>,
) -> Option<Found> {
    let host = receiver_of(r, f)?;
    if super::cpu::full_cpu(r, host).is_some() {
        return None;
    }
    figures.push(("rcvbuf_end_bytes", f64::from(f.rcvbuf_end)));
    let room = match max {
        Some(m) => {
            figures.push(("tcp_rmem_max_bytes", m as f64));
            format!(
                "the receive buffer ended at {} of net.ipv4.tcp_rmem's {}: autotuning had room, so the sysctl is not the cause",
                size::human(f.rcvbuf_end.into()),
                size::human(m)
            )
        }
        None => format!(
            "the receive buffer ended at {} (net.ipv4.tcp_rmem was not read)",
            size::human(f.rcvbuf_end.into())
        ),
    };
    Some(Found {
        id: "receiver_slow",
        severity: Severity::Warning,
        confidence: if max.is_some() { Confidence::Medium } else { Confidence::Low },
        seen,
        figures,
        why: format!(
            "{room}; the receiving application on {} did not read fast enough to open the window (its busiest CPU was {:.0}% busy)",
            host.name, host.cpu.busiest_cpu.total
        ),
        change: "a larger --read, more flows (-P) on more CPUs (--affinity), or a faster receiving disk or application".into(),
    })
}

/// The flow most limited by its send buffer, when the buffer's arithmetic says so: limited
/// more than [`LIMITED_PCT`] of the time, and its rate at least [`NEAR_CAP`] of half the
/// buffer (the kernel's overhead share) x 8 / RTT.
fn send_buffer(r: &Report, s: &Settings) -> Option<Found> {
    let f = most_limited(r, |f| f.sndbuf_limited_pct)?;
    let buffer = u64::from(f.sndbuf_end.max(f.sndbuf));
    bound(f, buffer as f64 / 2.0)?;
    let (bdp, _) = bdp(r, f);
    let change = match (r.test.sndbuf, s.triple("net.ipv4.tcp_wmem")) {
        (Some(_), _) | (None, None) => format!(
            "--buffer {}K (twice the BDP: the kernel counts its overhead in the buffer)",
            bdp.saturating_mul(2).div_ceil(1024).max(1)
        ),
        (None, Some(t)) => format!(
            "sysctl -w net.ipv4.tcp_wmem='{} {} {}'",
            t[0],
            t[1],
            bdp.saturating_mul(2).max(64 << 20)
        ),
    };
    Some(Found {
        id: "send_buffer",
        severity: Severity::Warning,
        confidence: Confidence::Medium,
        seen: format!(
            "flow {} was limited by its send buffer {} of the time; the buffer was {} and the RTT {}; it got {}",
            f.id,
            pct(f.sndbuf_limited_pct),
            size::human(buffer),
            ms(f64::from(f.rtt_us)),
            rate::human(f.transfer.bits_per_second, 3)
        ),
        figures: vec![
            ("sndbuf_limited_pct", f.sndbuf_limited_pct),
            ("sndbuf_bytes", buffer as f64),
            ("rtt_us", f64::from(f.rtt_us)),
            ("bits_per_second", f.transfer.bits_per_second),
        ],
        why: "the sender could not queue more unacknowledged data than its buffer holds: about half of it is payload, and one round trip's worth is needed".into(),
        change,
    })
}
