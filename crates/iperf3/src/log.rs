//! What the agent's log says about each iperf3 test: fathom's own end, per stream.

use super::error::TestError;
use super::job::StreamEnd;
use super::session::Outcome;

/// Logs a test's outcome (one line for the test, one per stream) on stderr.
pub fn outcome(n: usize, peer: &str, r: &Result<Outcome, TestError>) {
    let o = match r {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fathom serve: iperf3 test {n} from {peer}: {e}");
            return;
        }
    };
    let p = &o.params;
    let dir = match (p.bidir, p.reverse) {
        (true, _) => "bidir",
        (false, true) => "reverse",
        (false, false) => "forward",
    };
    let (sent, received) = o.ends.iter().enumerate().fold((0, 0), |(s, r), (i, e)| {
        if p.server_sends(i as u32) {
            (s + e.bytes, r)
        } else {
            (s, r + e.bytes)
        }
    });
    eprintln!(
        "fathom serve: iperf3 test {n} from {peer}: {} {dir}, {} streams, {:.3} s: fathom sent {sent} B, received {received} B ({}), CPU {:.1}% (user {:.1}%, system {:.1}%)",
        if p.udp { "udp" } else { "tcp" },
        o.ends.len(),
        o.seconds,
        rate(sent + received, o.seconds),
        o.cpu.0,
        o.cpu.1,
        o.cpu.2
    );
    for (i, e) in o.ends.iter().enumerate() {
        let role = if p.server_sends(i as u32) {
            "sent"
        } else {
            "received"
        };
        eprintln!(
            "fathom serve: iperf3 test {n} stream {}: {role} {} B{}",
            super::results::stream_id(i),
            e.bytes,
            detail(e, p.udp)
        );
    }
}

/// A stream's UDP counts or TCP_INFO, as a log suffix.
fn detail(e: &StreamEnd, udp: bool) -> String {
    if udp {
        return format!(
            ", {} datagrams, {} lost, {} out of order, jitter {:.3} ms",
            e.packets,
            e.lost,
            e.out_of_order,
            e.jitter_s * 1e3
        );
    }
    match &e.tcp {
        Some(t) => format!(
            ", retransmits {}, rtt {} us (var {}), cwnd {}, mss {}, data segs out {} in {}",
            e.retransmits,
            t.rtt_us,
            t.rttvar_us,
            t.snd_cwnd,
            t.snd_mss,
            t.data_segs_out,
            t.data_segs_in
        ),
        None => String::new(),
    }
}

/// Bits per second, printed with fathom's units.
fn rate(bytes: u64, seconds: f64) -> String {
    if seconds <= 0.0 {
        return "no time".into();
    }
    format!("{:.3} Gbit/s", bytes as f64 * 8.0 / seconds / 1e9)
}
