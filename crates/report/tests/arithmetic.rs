//! The report's figures checked against the fake run's counters by hand.

mod common;

use common::report;
use fathom_report::fake::{IN_FLIGHT, RECEIVED, RETRANSMITS};

/// Flow 0's bytes received in the measured window [1 s, 4 s].
const WINDOW_BYTES: u64 = RECEIVED[4] - RECEIVED[1];
/// Flow 0's bytes sent in the window.
const WINDOW_SENT: u64 = WINDOW_BYTES + IN_FLIGHT[4] - IN_FLIGHT[1];

#[test]
fn per_flow_bytes_sum_to_the_summary() {
    for (flows, bidir) in [(1, false), (4, false), (4, true), (20, true)] {
        let r = report(flows, bidir);
        let s = &r.summary;
        assert_eq!(
            r.flows.iter().map(|f| f.transfer.bytes).sum::<u64>(),
            s.transfer.bytes
        );
        assert_eq!(
            r.flows.iter().map(|f| f.transfer.sender_bytes).sum::<u64>(),
            s.transfer.sender_bytes
        );
        assert_eq!(
            r.flows.iter().map(|f| f.retransmits).sum::<u64>(),
            s.retransmits
        );
        assert_eq!(
            s.directions.iter().map(|d| d.bytes).sum::<u64>(),
            if bidir { s.transfer.bytes } else { 0 }
        );
        for iv in &r.intervals {
            assert_eq!(iv.flows.iter().map(|f| f.bytes).sum::<u64>(), iv.bytes);
        }
    }
}

#[test]
fn measured_intervals_cover_exactly_the_window() {
    for (flows, bidir) in [(1, false), (4, true)] {
        let r = report(flows, bidir);
        let (omit, duration) = (r.test.omit_s, r.test.duration_s.expect("a timed test"));
        let measured: Vec<_> = r.intervals.iter().filter(|iv| !iv.omitted).collect();
        assert_eq!(measured.first().map(|iv| iv.start), Some(omit));
        assert_eq!(measured.last().map(|iv| iv.end), Some(omit + duration));
        for pair in measured.windows(2) {
            assert_eq!(pair[0].end, pair[1].start, "intervals must be contiguous");
        }
        assert!(r
            .intervals
            .iter()
            .filter(|iv| iv.omitted)
            .all(|iv| iv.end <= omit));
        let in_window: u64 = measured.iter().map(|iv| iv.bytes).sum();
        assert_eq!(
            in_window, r.summary.transfer.bytes,
            "the window's intervals add up to the summary"
        );
    }
}

#[test]
fn rates_follow_from_the_counters() {
    let r = report(1, false);
    let s = &r.summary;
    assert_eq!(s.seconds, 3.0);
    assert_eq!(s.transfer.bytes, WINDOW_BYTES);
    assert_eq!(s.transfer.bits_per_second, WINDOW_BYTES as f64 * 8.0 / 3.0);
    assert_eq!(s.transfer.bits_per_second, 880e6);
    assert_eq!(
        s.transfer.sender_bits_per_second,
        WINDOW_SENT as f64 * 8.0 / 3.0
    );
    assert_eq!(s.transfer.total_bytes_received, RECEIVED[5]);
    assert_eq!(s.retransmits, u64::from(RETRANSMITS[4] - RETRANSMITS[1]));
    let rates: Vec<f64> = r.intervals.iter().map(|iv| iv.bits_per_second).collect();
    assert_eq!(rates, [400e6, 800e6, 880e6, 960e6]);
    let omitted: Vec<bool> = r.intervals.iter().map(|iv| iv.omitted).collect();
    assert_eq!(omitted, [true, false, false, false]);
}

#[test]
fn flow_i_moves_i_plus_one_times_flow_zero() {
    let r = report(4, true);
    for f in &r.flows {
        let k = u64::from(f.id) + 1;
        assert_eq!(f.transfer.bytes, WINDOW_BYTES * k);
        assert_eq!(f.transfer.bits_per_second, 880e6 * k as f64);
        assert_eq!(f.direction, if f.id < 4 { "forward" } else { "reverse" });
    }
    let d = &r.summary.directions;
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].bits_per_second, 880e6 * 10.0);
    assert_eq!(d[1].bits_per_second, 880e6 * 26.0);
    assert_eq!(r.summary.transfer.bits_per_second, 880e6 * 36.0);
}

#[test]
fn tcp_and_cpu_follow_from_the_counters() {
    let r = report(1, false);
    let (f, t) = (&r.flows[0], &r.summary.tcp);
    assert_eq!((f.rtt_us, f.cwnd, f.mss), (140, 50, 1448));
    assert_eq!(f.data_segs_per_ack, 2.5);
    assert!((f.rwnd_limited_pct - 30.0).abs() < 1e-9);
    assert!((f.sndbuf_limited_pct - 10.0).abs() < 1e-9);
    assert!((f.busy_pct - 100.0).abs() < 1e-9);
    assert_eq!(t.data_segs_per_ack, 2.5);
    let (local, remote) = (&r.summary.cpu.local, &r.summary.cpu.remote);
    assert_eq!(
        (local.total, local.user, local.system, local.softirq),
        (40.0, 13.0, 20.0, 7.0)
    );
    assert_eq!(
        (
            remote.total,
            remote.busiest_cpu.cpu,
            remote.busiest_cpu.total
        ),
        (46.0, 0, 72.0)
    );
    assert!((local.fathom_s - 0.9).abs() < 1e-9);
    assert!((local.fathom_percent - 15.0).abs() < 1e-9);
    // Service demand: busy CPU µs over the window per KB received.
    let kb = WINDOW_BYTES as f64 / 1024.0;
    let sd = &r.summary.service_demand_us_per_kb;
    assert!((sd.local - 0.40 * 2.0 * 3.0 * 1e6 / kb).abs() < 1e-9);
    assert!((sd.remote - 0.46 * 2.0 * 3.0 * 1e6 / kb).abs() < 1e-9);
    assert!(r
        .intervals
        .iter()
        .all(|iv| iv.cpu_local == 40.0 && iv.cpu_remote == 46.0));
}

#[test]
fn buffers_and_warnings() {
    let r = report(1, false);
    let b = &r.summary.buffers;
    assert_eq!((b.requested.send, b.requested.recv), (None, None));
    assert_eq!(
        (b.effective_send, b.effective_recv, b.clamped),
        (16_384, 131_072, false)
    );
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("receive window 30%"));
}
