//! The `-J` document of `fathom iperf3 -c`, in iperf3 3.12's shape so that its consumers parse
//! it unchanged: `start` (connected sockets, the test's settings), `intervals[]` (this end's
//! counts, with TCP_INFO on the streams it sends), `end` (`json_end`: each stream's sender
//! and receiver, `sum_sent`, `sum_received`, UDP's `sum`, CPU of both ends). fathom's own
//! figures that iperf3 has no place for go under `extensions.fathom`.
//!
//! Which end each figure comes from: this end (fathom) counts what it sent or received and
//! samples the intervals; the far end's figures are the server's results message. A stream's
//! `socket` is its iperf3 stream id (1, 3, 4…), not a descriptor number.

use super::client::{Both, Start};
use super::client_interval::Interval;
use super::figures::{figures, finite};
use super::json_end;
use super::params::Params;
use super::results::stream_id;
use serde_json::{json, Map, Value};

/// Where the test went: the host as the user named it, and the port.
pub struct Target<'a> {
    /// `-c HOST`.
    pub host: &'a str,
    /// `-p PORT`.
    pub port: u16,
}

/// The whole `-J` document.
pub fn document(b: &Both, t: &Target) -> Value {
    let mut cut = Intervals::default();
    let intervals: Vec<Value> = b
        .intervals
        .iter()
        .map(|iv| cut.next(&b.params, iv))
        .collect();
    json!({
        "start": start(&b.params, &b.start, t),
        "intervals": intervals,
        "end": json_end::end(b),
        "extensions": extensions(b),
    })
}

/// An error document, as iperf3 prints one with `-J`.
pub fn error_document(msg: &str) -> Value {
    json!({"start": {}, "intervals": [], "end": {}, "error": msg})
}

/// `start`: the connected streams and the test's settings.
pub fn start(p: &Params, s: &Start, t: &Target) -> Value {
    let connected: Vec<Value> = s
        .connected
        .iter()
        .enumerate()
        .map(|(i, (local, remote))| {
            json!({"socket": stream_id(i), "local_host": local.ip().to_string(),
                "local_port": local.port(), "remote_host": remote.ip().to_string(),
                "remote_port": remote.port()})
        })
        .collect();
    let mut v = json!({
        "connected": connected,
        "version": concat!("fathom ", env!("CARGO_PKG_VERSION"), " (iperf 3.12 protocol)"),
        "system_info": system_info(),
        "timestamp": {"time": http_date(s.started_unix), "timesecs": s.started_unix},
        "connecting_to": {"host": t.host, "port": t.port},
        "cookie": s.cookie,
        "target_bitrate": p.rate,
        "sock_bufsize": p.window,
        "sndbuf_actual": s.bufs.0,
        "rcvbuf_actual": s.bufs.1,
        "test_start": {
            "protocol": if p.udp { "UDP" } else { "TCP" },
            "num_streams": p.parallel, "blksize": p.len, "omit": p.omit, "duration": p.time,
            "bytes": p.bytes, "blocks": 0, "reverse": u8::from(p.reverse), "tos": p.tos,
            "target_bitrate": p.rate, "bidir": u8::from(p.bidir),
        },
    });
    if !p.udp {
        v["tcp_mss_default"] = json!(s.mss);
    }
    v
}

/// The intervals of one test, each as iperf3 writes it; keeps each stream's retransmit count
/// at the last cut.
#[derive(Default)]
pub struct Intervals {
    prev: Vec<u32>,
}

impl Intervals {
    /// The next interval: each stream's bytes and, on the streams this end sends over TCP, its
    /// TCP_INFO.
    pub fn next(&mut self, p: &Params, iv: &Interval) -> Value {
        self.prev.resize(iv.bytes.len(), 0);
        interval(p, iv, &mut self.prev)
    }
}

fn interval(p: &Params, iv: &Interval, prev: &mut [u32]) -> Value {
    let mut streams = Vec::with_capacity(iv.bytes.len());
    for (i, &bytes) in iv.bytes.iter().enumerate() {
        let sender = !p.server_sends(i as u32);
        let mut s = figures(iv.start, iv.end, bytes, sender);
        s["socket"] = json!(stream_id(i));
        if p.udp {
            s["packets"] = json!(bytes.div_ceil(p.len.max(1) as u64));
        } else if let (true, Some(t)) = (sender, iv.tcp.get(i).and_then(Option::as_ref)) {
            let retr = t.retransmits.saturating_sub(prev[i]);
            prev[i] = t.retransmits;
            s["retransmits"] = json!(retr);
            s["snd_cwnd"] = json!(u64::from(t.snd_cwnd) * u64::from(t.snd_mss));
            s["snd_wnd"] = json!(t.snd_wnd);
            s["rtt"] = json!(t.rtt_us);
            s["rttvar"] = json!(t.rttvar_us);
            s["pmtu"] = json!(iv.pmtu.get(i).copied().flatten().unwrap_or(0));
        }
        s["omitted"] = json!(iv.omitted);
        streams.push(s);
    }
    let mut out = json!({"streams": streams});
    let forward = |i: usize| !p.bidir || i < p.parallel as usize;
    out["sum"] = interval_sum(&streams, iv, forward);
    if p.bidir {
        out["sum_bidir_reverse"] = interval_sum(&streams, iv, |i| !forward(i));
    }
    out
}

/// The sum over the streams `pick` selects, of one interval.
fn interval_sum(streams: &[Value], iv: &Interval, pick: impl Fn(usize) -> bool) -> Value {
    let chosen: Vec<&Value> = streams
        .iter()
        .enumerate()
        .filter(|(i, _)| pick(*i))
        .map(|(_, s)| s)
        .collect();
    let total = |k: &str| chosen.iter().filter_map(|s| s[k].as_u64()).sum::<u64>();
    let sender = chosen.first().is_some_and(|s| s["sender"] == true);
    let mut sum = figures(iv.start, iv.end, total("bytes"), sender);
    for k in ["retransmits", "packets"] {
        if chosen.iter().any(|s| s.get(k).is_some()) {
            sum[k] = json!(total(k));
        }
    }
    sum["omitted"] = json!(iv.omitted);
    sum
}

/// fathom's figures that iperf3's shape has no place for.
fn extensions(b: &Both) -> Value {
    let streams: Vec<Value> = b
        .near
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut s = Map::new();
            s.insert("id".into(), json!(stream_id(i)));
            let role = if b.params.server_sends(i as u32) {
                "receiver"
            } else {
                "sender"
            };
            s.insert("role".into(), json!(role));
            s.insert("bytes".into(), json!(e.bytes));
            s.insert(
                "cpu_us".into(),
                json!({"user": e.cpu_us.0, "system": e.cpu_us.1}),
            );
            if b.params.udp {
                s.insert("packets".into(), json!(e.packets));
                s.insert("lost_packets".into(), json!(e.lost));
                s.insert("out_of_order".into(), json!(e.out_of_order));
                s.insert("jitter_ms".into(), json!(finite(e.jitter_s * 1e3)));
            } else {
                s.insert("tcp_info".into(), json!(e.tcp));
            }
            Value::Object(s)
        })
        .collect();
    json!({"fathom": {
        "near": {"streams": streams, "seconds": finite(b.seconds),
            "cpu_percent": {"total": finite(b.near_cpu.0), "user": finite(b.near_cpu.1),
                "system": finite(b.near_cpu.2)}},
        "far_results": b.far,
    }})
}

/// `uname -a`'s first fields, as iperf3's `system_info` holds them.
fn system_info() -> String {
    fathom_engine::measure::host::uname()
}

/// An HTTP date ("Thu, 26 Nov 2026 06:17:06 GMT"), as iperf3's `timestamp.time`.
pub fn http_date(unix: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, secs) = (unix / 86_400, unix % 86_400);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_iperf3_writes_them() {
        assert_eq!(http_date(1_795_673_826), "Thu, 26 Nov 2026 06:17:06 GMT");
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
