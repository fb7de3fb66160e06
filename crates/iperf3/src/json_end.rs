//! The `end` of the `-J` document (see `json`): per stream the sender's and the receiver's
//! figures, each from the end that played that role (this end's counts, or the server's
//! results message), their sums, UDP's `sum` (the sender's bytes with the receiver's loss and
//! jitter, as iperf3 writes it), both ends' CPU and congestion control.

use super::client::Both;
use super::figures::{figures, finite};
use super::results::stream_id;
use serde_json::{json, Value};

/// One stream's two ends, as the test saw them.
struct Ends {
    /// This end sends on it.
    near_sends: bool,
    /// It runs from the server to the client in a `--bidir` test.
    reverse: bool,
    sender: Value,
    receiver: Value,
}

/// `end`: streams, sums, CPU, congestion control.
pub fn end(b: &Both) -> Value {
    let ends: Vec<Ends> = (0..b.near.len()).map(|i| stream_ends(b, i)).collect();
    let streams: Vec<Value> = ends
        .iter()
        .map(|e| {
            if b.params.udp {
                json!({"udp": udp_stream(e)})
            } else {
                json!({"sender": e.sender, "receiver": e.receiver})
            }
        })
        .collect();
    let mut out = json!({"streams": streams});
    let sums = |reverse: bool| {
        let chosen: Vec<&Ends> = ends.iter().filter(|e| e.reverse == reverse).collect();
        (sum(&chosen, true), sum(&chosen, false))
    };
    let (sent, received) = sums(false);
    if b.params.udp {
        out["sum"] = udp_sum(&sent, &received);
    }
    out["sum_sent"] = sent;
    out["sum_received"] = received;
    if b.params.bidir {
        let (sent, received) = sums(true);
        out["sum_sent_bidir_reverse"] = sent;
        out["sum_received_bidir_reverse"] = received;
    }
    let far = &b.far;
    let cpu = |k: &str| finite(far[k].as_f64().unwrap_or(0.0));
    out["cpu_utilization_percent"] = json!({
        "host_total": finite(b.near_cpu.0), "host_user": finite(b.near_cpu.1),
        "host_system": finite(b.near_cpu.2), "remote_total": cpu("cpu_util_total"),
        "remote_user": cpu("cpu_util_user"), "remote_system": cpu("cpu_util_system"),
    });
    if !b.params.udp {
        congestion(b, &mut out);
    }
    out
}

/// `sender_tcp_congestion` and `receiver_tcp_congestion`, where each end named its own.
fn congestion(b: &Both, out: &mut Value) {
    let near = b.start.congestion.clone();
    let far = b.far["congestion_used"].as_str().map(str::to_string);
    let near_sends = !b.params.server_sends(0);
    let (sender, receiver) = if near_sends { (near, far) } else { (far, near) };
    if let Some(cc) = sender {
        out["sender_tcp_congestion"] = json!(cc);
    }
    if let Some(cc) = receiver {
        out["receiver_tcp_congestion"] = json!(cc);
    }
}

/// Stream `i`'s sender and receiver figures: this end's counts for the role it played, the
/// server's results for the other.
fn stream_ends(b: &Both, i: usize) -> Ends {
    let p = &b.params;
    let id = stream_id(i);
    let far = b.far["streams"]
        .as_array()
        .and_then(|s| s.iter().find(|x| x["id"].as_u64() == Some(id)))
        .cloned()
        .unwrap_or(Value::Null);
    let near = &b.near[i];
    let near_sends = !p.server_sends(i as u32);
    let secs = finite(b.seconds);
    let far_secs = far["end_time"].as_f64().map_or(secs, finite);
    let far_bytes = far["bytes"].as_u64().unwrap_or(0);
    let (mut sender, mut receiver) = if near_sends {
        let s = figures(0.0, secs, near.bytes, true);
        (s, figures(0.0, far_secs, far_bytes, true))
    } else {
        let s = figures(0.0, far_secs, far_bytes, false);
        (s, figures(0.0, secs, near.bytes, false))
    };
    for f in [&mut sender, &mut receiver] {
        f["socket"] = json!(id);
    }
    if p.udp {
        udp_figures(b, i, &far, &mut sender, &mut receiver);
    } else if near_sends {
        sender["retransmits"] = json!(near.retransmits);
        rtt_figures(b, i, &mut sender);
    } else {
        if let Some(r) = far["retransmits"].as_i64().filter(|r| *r >= 0) {
            sender["retransmits"] = json!(r);
        }
        // The server's TCP_INFO never reaches the client: 0, as iperf3's own client writes.
        for k in [
            "max_snd_cwnd",
            "max_snd_wnd",
            "max_rtt",
            "min_rtt",
            "mean_rtt",
        ] {
            sender[k] = json!(0);
        }
    }
    Ends {
        near_sends,
        reverse: p.bidir && i >= p.parallel as usize,
        sender,
        receiver,
    }
}

/// The sending stream's largest cwnd and send window and its RTTs, over this end's intervals.
fn rtt_figures(b: &Both, i: usize, sender: &mut Value) {
    let infos: Vec<_> = b
        .intervals
        .iter()
        .filter_map(|iv| iv.tcp.get(i).and_then(Option::as_ref))
        .chain(b.near[i].tcp.as_ref())
        .collect();
    let max = |f: &dyn Fn(&fathom_proto::sample::TcpInfo) -> u64| {
        infos.iter().map(|t| f(t)).max().unwrap_or(0)
    };
    let rtts: Vec<u64> = infos.iter().map(|t| u64::from(t.rtt_us)).collect();
    let mean = if rtts.is_empty() {
        0
    } else {
        rtts.iter().sum::<u64>() / rtts.len() as u64
    };
    sender["max_snd_cwnd"] = json!(max(&|t| u64::from(t.snd_cwnd) * u64::from(t.snd_mss)));
    sender["max_snd_wnd"] = json!(max(&|t| u64::from(t.snd_wnd)));
    sender["max_rtt"] = json!(rtts.iter().max().copied().unwrap_or(0));
    sender["min_rtt"] = json!(rtts.iter().min().copied().unwrap_or(0));
    sender["mean_rtt"] = json!(mean);
}

/// UDP: the sender's datagrams; the receiver's loss, jitter and datagrams (the receiving
/// end's figures, from whichever end received).
fn udp_figures(b: &Both, i: usize, far: &Value, sender: &mut Value, receiver: &mut Value) {
    let near = &b.near[i];
    let (sent, got, lost, jitter_s, ooo) = if !b.params.server_sends(i as u32) {
        let got = far["packets"].as_u64().unwrap_or(0);
        let lost = far["errors"].as_u64().unwrap_or(0);
        (
            near.packets,
            got,
            lost,
            far["jitter"].as_f64().unwrap_or(0.0),
            0,
        )
    } else {
        let sent = far["packets"].as_u64().unwrap_or(0);
        (
            sent,
            near.packets,
            near.lost,
            near.jitter_s,
            near.out_of_order,
        )
    };
    let pct = |l: u64, n: u64| {
        if n > 0 {
            l as f64 * 100.0 / n as f64
        } else {
            0.0
        }
    };
    for (f, packets, lost, jitter) in [(sender, sent, 0, 0.0), (receiver, got, lost, jitter_s)] {
        f["jitter_ms"] = json!(finite(jitter * 1e3));
        f["lost_packets"] = json!(lost);
        f["packets"] = json!(packets);
        f["lost_percent"] = json!(finite(pct(lost, packets)));
        f["out_of_order"] = json!(ooo);
    }
}

/// A UDP stream's one entry: the sender's bytes and time with the receiver's counts.
fn udp_stream(e: &Ends) -> Value {
    let mut s = e.sender.clone();
    for k in [
        "jitter_ms",
        "lost_packets",
        "packets",
        "lost_percent",
        "out_of_order",
    ] {
        s[k] = e.receiver[k].clone();
    }
    s["sender"] = json!(e.near_sends);
    s
}

/// UDP's `sum`: the bytes sent, the receiver's loss and jitter.
fn udp_sum(sent: &Value, received: &Value) -> Value {
    let mut s = sent.clone();
    for k in ["jitter_ms", "lost_packets", "packets", "lost_percent"] {
        s[k] = received[k].clone();
    }
    s
}

/// The sum of the senders' (`senders`) or the receivers' figures of `chosen`.
fn sum(chosen: &[&Ends], senders: bool) -> Value {
    let figs: Vec<&Value> = chosen
        .iter()
        .map(|e| if senders { &e.sender } else { &e.receiver })
        .collect();
    let total = |k: &str| figs.iter().filter_map(|f| f[k].as_u64()).sum::<u64>();
    let end = figs
        .iter()
        .filter_map(|f| f["end"].as_f64())
        .fold(0.0, f64::max);
    let near_sends = chosen.first().is_some_and(|e| e.near_sends);
    let mut s = figures(0.0, end, total("bytes"), near_sends);
    if figs.iter().any(|f| f.get("retransmits").is_some()) {
        s["retransmits"] = json!(total("retransmits"));
    }
    if figs.iter().any(|f| f.get("packets").is_some()) {
        let (lost, packets) = (total("lost_packets"), total("packets"));
        let jitter = figs
            .iter()
            .filter_map(|f| f["jitter_ms"].as_f64())
            .sum::<f64>()
            / figs.len().max(1) as f64;
        s["jitter_ms"] = json!(finite(jitter));
        s["lost_packets"] = json!(lost);
        s["packets"] = json!(packets);
        s["lost_percent"] = json!(if packets > 0 {
            lost as f64 * 100.0 / packets as f64
        } else {
            0.0
        });
    }
    s
}
