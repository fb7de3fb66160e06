//! The loss causes: TCP retransmits (lost on the path: a receiving TCP socket never drops for
//! want of buffer, flow control stops the sender first), checked against the Mathis bound
//! (rate <= MSS x 8 / RTT x 1.22 / sqrt(p)); and UDP datagrams missing, by where the kernel and
//! the lab's emulator say they went (the report's `udp.missing`).

use super::found::{ms, pct, wan_param, Found};
use crate::{Confidence, Severity};
use fathom_report::model::Report;
use fathom_units::rate;

/// A loss share worth a finding, % of the segments or datagrams sent.
const LOSS_PCT: f64 = 0.1;
/// Fewer losses than this say nothing about the path (a timeout in a short run).
const MIN_LOST: u64 = 10;

/// The loss findings of run `r`.
pub(super) fn findings(r: &Report) -> Vec<Found> {
    let mut out: Vec<Found> = tcp(r).into_iter().collect();
    out.extend(udp(r));
    out
}

/// TCP retransmits above [`LOSS_PCT`] of the segments sent.
fn tcp(r: &Report) -> Option<Found> {
    if r.summary.udp().is_some() || r.summary.retransmits < MIN_LOST {
        return None;
    }
    let flows: Vec<_> = r
        .flows
        .iter()
        .filter(|f| f.mss > 0 && f.rtt_us > 0)
        .collect();
    let mss = flows.iter().map(|f| f64::from(f.mss)).sum::<f64>() / flows.len().max(1) as f64;
    let rtt = flows.iter().map(|f| f64::from(f.rtt_us)).sum::<f64>() / flows.len().max(1) as f64;
    if mss == 0.0 || r.summary.transfer.sender_bytes == 0 {
        return None;
    }
    let segments = r.summary.transfer.sender_bytes as f64 / mss;
    let p = r.summary.retransmits as f64 / segments;
    if p * 100.0 < LOSS_PCT {
        return None;
    }
    let per_flow = r.summary.transfer.bits_per_second / flows.len().max(1) as f64;
    let cap = mss * 8.0 * 1e6 / rtt * 1.22 / p.sqrt();
    // The loss explains a rate near its bound; a rate far below it was set by something else
    // (a file copy at its disk's pace lost 12 segments of 1,448 on a loaded veth pair).
    let explains = per_flow <= 3.0 * cap && per_flow >= cap / 3.0;
    let mut figures = vec![
        ("retransmits", r.summary.retransmits as f64),
        ("segments_sent", segments.round()),
        ("retransmit_pct", p * 100.0),
        ("rtt_us", rtt),
        ("mathis_bps", cap),
        ("bits_per_second_per_flow", per_flow),
    ];
    let emulator = match wan_param(r, "loss") {
        Some(l) => format!("; the lab's WAN link drops {l} of the frames on purpose"),
        None => String::new(),
    };
    if let Some(l) = wan_param(r, "loss").and_then(|l| fathom_units::percent::parse(&l).ok()) {
        figures.push(("wan_loss_pct", l * 100.0));
    }
    Some(Found {
        id: "path_loss",
        severity: Severity::Warning,
        confidence: if explains { Confidence::High } else { Confidence::Medium },
        seen: format!(
            "{} retransmits of about {:.0} segments sent ({}) at an RTT of {}{emulator}",
            r.summary.retransmits,
            segments,
            pct(p * 100.0),
            ms(rtt)
        ),
        figures,
        why: format!(
            "segments were lost on the path, not in the receiving socket (TCP's flow control stops a sender before the receiver's buffer overflows); with this loss and RTT one loss-based stream carries about {} (Mathis: MSS x 8 / RTT x 1.22 / sqrt(loss)), and it got {}",
            rate::human(cap, 3),
            rate::human(per_flow, 3)
        ),
        change: "find and fix the lossy hop (fathom udp at a rate below the path's shows loss by place); meanwhile more streams (-P 4) or a congestion control that tolerates random loss (--cc bbr, after modprobe tcp_bbr) keep more in flight".into(),
    })
}

/// UDP datagrams missing above [`LOSS_PCT`] of those sent: in the receiving socket's buffer,
/// or on the path (the emulator's drops and what no counter explains).
fn udp(r: &Report) -> Vec<Found> {
    let Some(u) = r.summary.udp() else {
        return Vec::new();
    };
    let m = &u.missing;
    let sent = u.sender_datagrams.max(1) as f64;
    let share = |n: u64| n as f64 * 100.0 / sent;
    let mut out = Vec::new();
    if m.receive_buffer >= MIN_LOST && share(m.receive_buffer) >= LOSS_PCT {
        out.push(Found {
            id: "udp_socket_buffer",
            severity: Severity::Warning,
            confidence: Confidence::High,
            seen: format!(
                "{} of {} datagrams sent ({}) were dropped in the receiving socket's buffer: RcvbufErrors {} on the receiving host, SO_RXQ_OVFL {} on the test's sockets; the receiving buffer was {} bytes",
                m.receive_buffer,
                u.sender_datagrams,
                pct(share(m.receive_buffer)),
                m.host_rcvbuf_errors,
                m.socket_rxq_overflow,
                r.summary.buffers.effective_recv
            ),
            figures: vec![
                ("receive_buffer_drops", m.receive_buffer as f64),
                ("rcvbuf_errors", m.host_rcvbuf_errors as f64),
                ("rxq_overflow", m.socket_rxq_overflow as f64),
                ("sender_datagrams", u.sender_datagrams as f64),
                ("effective_recv_bytes", r.summary.buffers.effective_recv as f64),
            ],
            why: "datagrams arrived faster than the receiver read them and its socket buffer was full: the kernel dropped them there, not on the path".into(),
            change: "--buffer 4M (raise net.core.rmem_max to match: sysctl -w net.core.rmem_max=8388608), a lower --rate, or more receiving threads (-P)".into(),
        });
    }
    let path = m.path + m.unexplained;
    if path >= MIN_LOST && share(path) >= LOSS_PCT && path > m.receive_buffer {
        out.push(Found {
            id: "udp_path_loss",
            severity: Severity::Warning,
            confidence: if m.path > 0 { Confidence::High } else { Confidence::Medium },
            seen: format!(
                "{} of {} datagrams sent ({}) went missing outside the receiving socket: {} dropped by the lab's emulator, {} where no counter explains",
                path,
                u.sender_datagrams,
                pct(share(path)),
                m.path,
                m.unexplained
            ),
            figures: vec![
                ("path_drops", m.path as f64),
                ("unexplained", m.unexplained as f64),
                ("sender_datagrams", u.sender_datagrams as f64),
            ],
            why: "the receiving host's counters show no drop for these, so they were lost between the hosts: a queue on the path overflowed or a link lost them".into(),
            change: "send below the path's rate (--rate), or find the lossy hop; a larger --buffer does not help loss on the path".into(),
        });
    }
    out
}
