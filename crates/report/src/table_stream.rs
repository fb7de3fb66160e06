//! The stream's terminal table, which every stream-like kind shares: bit rates and TCP state
//! per interval and per flow, and the summary of bytes, CPU, buffers and TCP internals.
//! [`Section`](crate::section::Section)'s default table methods write it, and a kind adds its
//! summary lines after the retransmits (a file copy's, a profile's) with
//! `Section::after_retransmits`.

use crate::cells::{buffers, cpu_lines, direction, service_demand, Item};
use crate::floor::text::{arrow, human_bytes, pct, rate, rtt, secs};
use crate::model::{FlowResult, Interval, Report};

/// The interval table's column heads.
pub(crate) fn head() -> String {
    format!(
        "{:>11} {:>13} {:>13} {:>6} {:>9} {:>7} {:>10} {:>7}",
        "time", "receiver", "sender", "retr", "rtt", "cwnd", "cpu local", "remote"
    )
}

/// One interval's line under `label`.
pub(crate) fn row(label: &str, iv: &Interval) -> String {
    format!(
        "{:>11} {:>13} {:>13} {:>6} {:>9} {:>7} {:>10} {:>7}",
        label,
        rate(iv.bits_per_second),
        rate(iv.sender_bits_per_second),
        iv.retransmits,
        rtt(iv.rtt_us),
        iv.cwnd,
        pct(iv.cpu_local),
        pct(iv.cpu_remote),
    )
}

/// One line per flow over the measured window.
pub(crate) fn flows(list: &[FlowResult]) -> Vec<String> {
    let row = |c: [&str; 12]| {
        format!(
            "{:>4} {:^3} {:>13} {:>13} {:>10} {:>6} {:>9} {:>7} {:>9} {:>9} {:>8} {:>8}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
        )
    };
    let head = [
        "flow", "dir", "receiver", "sender", "bytes", "retr", "rtt", "cwnd", "segs/ack",
        "rwnd-lim", "sndbuf", "rcvbuf",
    ];
    let mut lines = vec![row(head)];
    lines.extend(list.iter().map(|f| {
        row([
            &f.id.to_string(),
            arrow(&f.direction),
            &rate(f.transfer.bits_per_second),
            &rate(f.transfer.sender_bits_per_second),
            &human_bytes(f.transfer.bytes),
            &f.retransmits.to_string(),
            &rtt(f.rtt_us.into()),
            &f.cwnd.to_string(),
            &format!("{:.2}", f.data_segs_per_ack),
            &pct(f.rwnd_limited_pct),
            &human_bytes(f.sndbuf.into()),
            &human_bytes(f.rcvbuf.into()),
        ])
    }));
    lines
}

/// A stream's summary lines; `after_retransmits` adds a kind's own lines there (a copy's).
pub(crate) fn summary(
    r: &Report,
    item: &mut Item<'_>,
    after_retransmits: &mut dyn FnMut(&mut Item<'_>),
) {
    let s = &r.summary;
    let t = &s.tcp;
    item(
        "receiver",
        format!(
            "{}  (sender {})",
            rate(s.transfer.bits_per_second),
            rate(s.transfer.sender_bits_per_second)
        ),
    );
    item(
        "bytes",
        format!(
            "{} received in {}, {} sent",
            human_bytes(s.transfer.bytes),
            secs(s.seconds),
            human_bytes(s.transfer.sender_bytes)
        ),
    );
    item("retransmits", s.retransmits.to_string());
    after_retransmits(item);
    for d in &s.directions {
        item(&d.direction, direction(d));
    }
    cpu_lines(r, item);
    item("service demand", service_demand(r));
    let (send, recv) = buffers(&s.buffers, r);
    item("send buffer", send);
    item("recv buffer", recv);
    item("segs per ack", format!("{:.2}", t.data_segs_per_ack));
    item(
        "rtt",
        format!("{} (variation {})", rtt(t.rtt_us), rtt(t.rttvar_us)),
    );
    item(
        "limited by",
        format!(
            "receive window {}, send buffer {} of the window",
            pct(t.rwnd_limited_pct),
            pct(t.sndbuf_limited_pct)
        ),
    );
}
