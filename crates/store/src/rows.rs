//! The queryable copies of a report's intervals and flows, one row each.

use fathom_report::model::{FlowResult, Interval};
use rusqlite::{params, Connection};

/// A counter as SQLite's signed integer, saturating (the report's JSON keeps the exact value).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Inserts run `run_id`'s intervals, numbered from 0.
pub fn insert_intervals(
    conn: &Connection,
    run_id: i64,
    intervals: &[Interval],
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "INSERT INTO intervals (run_id, idx, start_s, end_s, omitted, bits_per_second,
             sender_bits_per_second, bytes, retransmits, rtt_us, cwnd, cpu_local, cpu_remote,
             transactions_per_second, latency_p50_us, latency_p99_us, lost)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?;
    for (idx, iv) in intervals.iter().enumerate() {
        let rr = iv.rr();
        stmt.execute(params![
            run_id,
            int(idx as u64),
            iv.start,
            iv.end,
            iv.omitted,
            iv.bits_per_second,
            iv.sender_bits_per_second,
            int(iv.bytes),
            int(iv.retransmits),
            iv.rtt_us,
            int(iv.cwnd),
            iv.cpu_local,
            iv.cpu_remote,
            rr.map(|r| r.transactions_per_second),
            rr.and_then(|r| r.latency_p50_us),
            rr.and_then(|r| r.latency_p99_us),
            rr.and_then(|r| r.lost).map(int),
        ])?;
    }
    Ok(())
}

/// Inserts run `run_id`'s flows.
pub fn insert_flows(conn: &Connection, run_id: i64, flows: &[FlowResult]) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "INSERT INTO flows (run_id, id, direction, bits_per_second, sender_bits_per_second, bytes,
             sender_bytes, retransmits, rtt_us, rttvar_us, min_rtt_us, cwnd, window, mss,
             data_segs_per_ack, delivery_rate_bps, rwnd_limited_pct, sndbuf_limited_pct,
             busy_pct, sndbuf, rcvbuf, cc, transactions, transactions_per_second, sender,
             receiver)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
    )?;
    for f in flows {
        stmt.execute(params![
            run_id,
            f.id,
            f.direction,
            f.transfer.bits_per_second,
            f.transfer.sender_bits_per_second,
            int(f.transfer.bytes),
            int(f.transfer.sender_bytes),
            int(f.retransmits),
            f.rtt_us,
            f.rttvar_us,
            f.min_rtt_us,
            f.cwnd,
            f.window,
            f.mss,
            f.data_segs_per_ack,
            f.delivery_rate_bps,
            f.rwnd_limited_pct,
            f.sndbuf_limited_pct,
            f.busy_pct,
            f.sndbuf,
            f.rcvbuf,
            f.cc,
            f.rr().map(|r| int(r.transactions)),
            f.rr().map(|r| r.transactions_per_second),
            f.sender,
            f.receiver,
        ])?;
    }
    Ok(())
}
