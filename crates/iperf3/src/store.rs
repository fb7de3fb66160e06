//! What fathom measured of an iperf3 test, as a run of kind `stream` (TCP) or `udp` so that
//! `fathom runs`, `show` and `compare` read it as any other run: a test its agent answered,
//! saved in the agent's store (`fathom serve --iperf3 --store PATH`), or one it ran as the
//! client against an iperf3 server (`stream/udp --iperf3`, [`client_report`]). The server is the iperf3 port,
//! the client the iperf3 client's address. Each figure is the end's that counted it: fathom's
//! own for what it sent or received (every interval, TCP_INFO and host CPU figure too), the
//! peer's results ([`Peer`], bounded) for the other end's bytes, retransmits, datagrams, lost,
//! jitter, congestion control and CPU.

use super::client::Both;
use super::interval::Tick;
use super::peer::{Peer, PeerStream};
use super::results::stream_id;
use super::session::Outcome;
use fathom_engine::measure::cpu;
use fathom_proto::sample::TcpInfo;
use fathom_report::cpu::{busy_ticks, cpu_between};
use fathom_report::model::{
    Cpu, CpuPair, FlowInterval, FlowResult, HostResult, Interval, KindFlow, KindSummary, KindTest,
    Report, ServiceDemand, Summary, TcpSummary, TestEcho, Transfer, UdpFlow, UdpSummary, UdpTest,
};
use fathom_store::{NewRun, Store, StoreError};
use serde_json::Value;
use std::path::Path;

/// Saves test `o` from `peer` to the store at `path`, with the host's environment `env`; the
/// run's id.
pub fn save(
    path: &Path,
    env: &Value,
    o: &Outcome,
    server: &str,
    peer: &str,
) -> Result<i64, StoreError> {
    let report = report(o, server, peer);
    let args: Vec<String> = vec!["serve".into(), "--iperf3".into()];
    Store::open(path)?.save_run(&NewRun {
        report: &report,
        args: &args,
        command: &[],
        env,
        series: None,
    })
}

/// The run's report: fathom's figures of the test in the shape of a fathom result.
pub fn report(o: &Outcome, server: &str, peer: &str) -> Report {
    build(o, server, peer, true)
}

/// The report of a test fathom ran as the client (`stream/udp --iperf3`) against the iperf3
/// server `server`, from `me`: this end's counts, intervals and CPU, the far end's bytes from
/// its results, in the shape of a fathom result.
pub fn client_report(both: &Both, server: &str, me: &str) -> Report {
    let o = Outcome {
        params: both.params.clone(),
        ends: both.near.clone(),
        seconds: both.seconds,
        cpu: both.near_cpu,
        wall_s: both.seconds,
        started_unix_s: both.start.started_unix as f64,
        peer: Peer::read(&both.far, both.near.len()),
        congestion: both.start.congestion.clone(),
        ticks: both
            .intervals
            .iter()
            .map(|i| Tick {
                start_s: i.start,
                end_s: i.end,
                streams: i.bytes.iter().copied().zip(i.tcp.iter().copied()).collect(),
            })
            .collect(),
        host: both.host.clone(),
    };
    build(&o, server, me, false)
}

/// Whether fathom sent on stream `i`: the server's streams when it served (`serves`), the
/// client's otherwise.
fn sent_by_fathom(o: &Outcome, i: usize, serves: bool) -> bool {
    o.params.server_sends(i as u32) == serves
}

/// The report of `o` as fathom's end saw it; `serves`: fathom was the iperf3 server (its
/// figures are then the remote end's), else the client; `client_bytes` hold the other end's.
fn build(o: &Outcome, server: &str, peer: &str, serves: bool) -> Report {
    let p = &o.params;
    let flows: Vec<FlowResult> = (0..o.ends.len())
        .map(|i| flow(o, i, server, peer, serves))
        .collect();
    let secs = o.seconds.max(f64::MIN_POSITIVE);
    let bytes: u64 = flows.iter().map(|f| f.transfer.bytes).sum();
    let sender_bytes: u64 = flows.iter().map(|f| f.transfer.sender_bytes).sum();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let mut host = HostResult {
        name: if serves {
            format!("iperf3 {server}")
        } else {
            format!("fathom {peer}")
        },
        role: if serves { "server" } else { "client" }.into(),
        cpus,
        version: env!("CARGO_PKG_VERSION").into(),
        ..HostResult::default()
    };
    host.cpu = this_end_cpu(o, cpus);
    let (cpu, service_demand_us_per_kb) = sides(o, host.cpu.clone(), bytes, serves);
    Report {
        schema_version: fathom_report::model::SCHEMA_VERSION,
        fathom_version: env!("CARGO_PKG_VERSION").into(),
        test: echo(o, server, peer, serves),
        hosts: vec![host],
        summary: Summary {
            transfer: Transfer::whole(bytes, sender_bytes, secs),
            seconds: o.seconds,
            aggregate_bits_per_second: bytes as f64 * 8.0 / secs,
            retransmits: flows.iter().map(|f| f.retransmits).sum(),
            tcp: TcpSummary {
                rtt_us: mean(flows.iter().map(|f| f64::from(f.rtt_us))),
                rttvar_us: mean(flows.iter().map(|f| f64::from(f.rttvar_us))),
                ..TcpSummary::default()
            },
            cpu,
            service_demand_us_per_kb,
            section: p
                .udp
                .then(|| KindSummary::Udp(udp_summary(o, secs, serves))),
            ..Summary::default()
        },
        flows,
        intervals: o.ticks.iter().map(|t| interval(o, t, serves)).collect(),
        ..Report::default()
    }
}

/// The two sides' CPU and service demand: fathom's end's `mine` (the server's when it
/// `serves`) with its demand over the `bytes` received, the iperf3 end's as its results say.
fn sides(o: &Outcome, mine: Cpu, bytes: u64, serves: bool) -> (CpuPair, ServiceDemand) {
    let far = Cpu {
        iperf3: Some(o.peer.cpu.clone()),
        ..Cpu::default()
    };
    let demand = service_demand(o, bytes);
    if serves {
        (
            CpuPair {
                local: far,
                remote: mine,
            },
            ServiceDemand {
                local: 0.0,
                remote: demand,
            },
        )
    } else {
        (
            CpuPair {
                local: mine,
                remote: far,
            },
            ServiceDemand {
                local: demand,
                remote: 0.0,
            },
        )
    }
}

/// fathom's end's CPU: the host's figures from /proc/stat as fathom's own runs read them, and
/// the test threads' own time.
fn this_end_cpu(o: &Outcome, cpus: u32) -> Cpu {
    let hz = cpu::ticks_per_second() as f64;
    let mut c = o.host.snapshots().map_or_else(Cpu::default, |(a, b)| {
        cpu_between(&a, &b, hz, o.wall_s, false)
    });
    c.fathom_s = o.cpu.0 / 100.0 * o.wall_s;
    c.fathom_percent = o.cpu.0 / f64::from(cpus);
    c.process_user_s = o.cpu.1 / 100.0 * o.wall_s;
    c.process_system_s = o.cpu.2 / 100.0 * o.wall_s;
    c
}

/// This host's busy CPU µs per KB (1024 bytes) received, as fathom's own runs figure it; 0
/// when nothing was received or the host's ticks could not be read.
fn service_demand(o: &Outcome, bytes: u64) -> f64 {
    match o.host.snapshots() {
        Some((a, b)) if bytes > 0 => {
            let busy_s = busy_ticks(&a, &b) as f64 / cpu::ticks_per_second() as f64;
            busy_s * 1e6 / (bytes as f64 / 1024.0)
        }
        _ => 0.0,
    }
}

/// The test as the client asked for it.
fn echo(o: &Outcome, server: &str, peer: &str, serves: bool) -> TestEcho {
    let p = &o.params;
    let some = |v: u64| (v > 0).then_some(v);
    TestEcho {
        kind: if p.udp { "udp" } else { "stream" }.into(),
        agent: server.into(),
        clients: if serves {
            vec![peer.into()]
        } else {
            Vec::new()
        },
        direction: match (p.bidir, p.reverse) {
            (true, _) => "bidir",
            (false, true) => "reverse",
            (false, false) => "forward",
        }
        .into(),
        parallel: p.parallel,
        duration_s: (p.time > 0).then_some(p.time as f64),
        bytes: some(p.bytes),
        omit_s: p.omit as f64,
        interval_s: super::interval::EVERY.as_secs_f64(),
        write_size: u32::try_from(p.len).unwrap_or(u32::MAX),
        nodelay: p.nodelay,
        cc: p.congestion.clone(),
        mss: some(u64::from(p.mss)).map(|m| m as u32),
        sndbuf: some(u64::from(p.window)).map(|w| w as u32),
        rcvbuf: some(u64::from(p.window)).map(|w| w as u32),
        started_unix_s: o.started_unix_s,
        section: p.udp.then(|| {
            KindTest::Udp(UdpTest {
                size: u32::try_from(p.len).unwrap_or(u32::MAX),
                rate_bps: (p.rate > 0).then(|| p.rate as f64 * f64::from(p.parallel)),
                ..UdpTest::default()
            })
        }),
        ..TestEcho::default()
    }
}

/// Stream `i`: the receiver's and the sender's counts, fathom's TCP_INFO when fathom sent.
fn flow(o: &Outcome, i: usize, server: &str, peer: &str, serves: bool) -> FlowResult {
    let p = &o.params;
    let e = &o.ends[i];
    let fathom_sends = sent_by_fathom(o, i, serves);
    let theirs = peer_stream(o, i);
    let (bytes, sender_bytes) = if fathom_sends {
        (theirs.bytes.unwrap_or(0), e.bytes)
    } else {
        (e.bytes, theirs.bytes.unwrap_or(e.bytes))
    };
    let secs = o.seconds.max(f64::MIN_POSITIVE);
    let t = e.tcp.unwrap_or_default();
    let (sender, receiver) = if p.server_sends(i as u32) {
        (server, peer)
    } else {
        (peer, server)
    };
    FlowResult {
        id: stream_id(i) as u32,
        direction: if p.server_sends(i as u32) {
            "reverse"
        } else {
            "forward"
        }
        .into(),
        transfer: Transfer::whole(bytes, sender_bytes, secs),
        retransmits: if fathom_sends {
            e.retransmits
        } else {
            theirs.retransmits.unwrap_or(0)
        },
        rtt_us: t.rtt_us,
        rttvar_us: t.rttvar_us,
        min_rtt_us: t.min_rtt_us,
        cwnd: t.snd_cwnd,
        window: t.snd_wnd,
        mss: t.snd_mss,
        delivery_rate_bps: t.delivery_rate as f64 * 8.0,
        cc: if fathom_sends {
            o.congestion.clone()
        } else {
            o.peer.congestion.clone()
        }
        .unwrap_or_default(),
        section: p.udp.then(|| {
            let (got, sent, lost) = datagrams(o, i, serves);
            KindFlow::Udp(UdpFlow {
                datagrams: got,
                datagrams_per_second: got as f64 / secs,
                sender_datagrams: sent,
                lost,
                reordered: (!fathom_sends).then_some(e.out_of_order),
                jitter_us: jitter_us(o, i, serves),
                ..UdpFlow::default()
            })
        }),
        sender: sender.into(),
        receiver: receiver.into(),
        ..FlowResult::default()
    }
}

/// Stream `i`'s datagrams: (received, sent, lost), each from the end that counted it. A
/// receiver's count is the highest sequence number it saw less the gaps (fathom's, or the
/// peer's `packets` and `errors`; without them, the peer's bytes over the datagram size and
/// its losses unknown); a sender's, what it sent.
fn datagrams(o: &Outcome, i: usize, serves: bool) -> (u64, u64, Option<u64>) {
    let e = &o.ends[i];
    let peer = peer_stream(o, i);
    if sent_by_fathom(o, i, serves) {
        match (peer.packets, peer.lost) {
            (Some(n), Some(lost)) => (n.saturating_sub(lost), e.packets, Some(lost)),
            _ => {
                let got = peer.bytes.unwrap_or(0) / o.params.len.max(1) as u64;
                (got, e.packets, None)
            }
        }
    } else {
        let sent = peer.packets.unwrap_or(e.packets);
        (e.packets.saturating_sub(e.lost), sent, Some(e.lost))
    }
}

/// What the peer's results say of stream `i` (nothing, when they do not list it).
fn peer_stream(o: &Outcome, i: usize) -> PeerStream {
    o.peer.streams.get(i).cloned().unwrap_or_default()
}

/// The UDP figures over the streams: losses where the receiving end counted them, reordering
/// where fathom received, jitter the mean over the streams that have it.
fn udp_summary(o: &Outcome, secs: f64, serves: bool) -> UdpSummary {
    let each: Vec<_> = (0..o.ends.len()).map(|i| datagrams(o, i, serves)).collect();
    let got: u64 = each.iter().map(|d| d.0).sum();
    let sent: u64 = each.iter().map(|d| d.1).sum();
    let counted: Vec<_> = (0..o.ends.len()).filter(|&i| each[i].2.is_some()).collect();
    let lost: u64 = counted.iter().filter_map(|&i| each[i].2).sum();
    let total: u64 = counted.iter().map(|&i| each[i].1).sum();
    let received: Vec<_> = (0..o.ends.len())
        .filter(|&i| !sent_by_fathom(o, i, serves))
        .collect();
    let jitters: Vec<f64> = (0..o.ends.len())
        .filter_map(|i| jitter_us(o, i, serves))
        .collect();
    UdpSummary {
        datagrams: got,
        datagrams_per_second: got as f64 / secs,
        sender_datagrams: sent,
        sender_datagrams_per_second: sent as f64 / secs,
        lost: (!counted.is_empty()).then_some(lost),
        lost_percent: (total > 0).then(|| lost as f64 * 100.0 / total as f64),
        reordered: (!received.is_empty())
            .then(|| received.iter().map(|&i| o.ends[i].out_of_order).sum()),
        jitter_us: (!jitters.is_empty()).then(|| mean(jitters.into_iter())),
        ..UdpSummary::default()
    }
}

/// Stream `i`'s jitter at its receiver, µs: fathom's, or the peer's where it received.
fn jitter_us(o: &Outcome, i: usize, serves: bool) -> Option<f64> {
    if sent_by_fathom(o, i, serves) {
        peer_stream(o, i).jitter_s.map(|j| j * 1e6)
    } else {
        Some(o.ends[i].jitter_s * 1e6)
    }
}

/// One interval of fathom's end: what it received and sent (the other end's share of the
/// interval is not known), and per stream its bytes and TCP_INFO.
fn interval(o: &Outcome, t: &Tick, serves: bool) -> Interval {
    let secs = (t.end_s - t.start_s).max(f64::MIN_POSITIVE);
    let p = &o.params;
    let by = |sends: bool| -> u64 {
        let mine = t.streams.iter().enumerate();
        mine.filter(|(i, _)| sent_by_fathom(o, *i, serves) == sends)
            .map(|(_, (b, _))| b)
            .sum()
    };
    let (received, sent) = (by(false), by(true));
    let infos: Vec<TcpInfo> = t.streams.iter().filter_map(|(_, i)| *i).collect();
    let flows = t
        .streams
        .iter()
        .enumerate()
        .take(fathom_report::model::PER_FLOW_INTERVALS_MAX)
        .map(|(i, (b, info))| {
            let info = info.unwrap_or_default();
            let (got, sent) = if sent_by_fathom(o, i, serves) {
                (0, *b)
            } else {
                (*b, 0)
            };
            FlowInterval {
                id: stream_id(i) as u32,
                bits_per_second: got as f64 * 8.0 / secs,
                sender_bits_per_second: sent as f64 * 8.0 / secs,
                bytes: got,
                rtt_us: info.rtt_us,
                rttvar_us: info.rttvar_us,
                cwnd: info.snd_cwnd,
                window: info.snd_wnd,
                delivery_rate_bps: info.delivery_rate as f64 * 8.0,
                ..FlowInterval::default()
            }
        })
        .collect();
    Interval {
        start: t.start_s,
        end: t.end_s,
        measured_start: t.start_s,
        measured_end: t.end_s,
        omitted: t.end_s <= p.omit as f64,
        bits_per_second: received as f64 * 8.0 / secs,
        sender_bits_per_second: sent as f64 * 8.0 / secs,
        bytes: received,
        rtt_us: mean(infos.iter().map(|i| f64::from(i.rtt_us))),
        cwnd: infos.iter().map(|i| u64::from(i.snd_cwnd)).sum(),
        flows,
        ..Interval::default()
    }
}

/// The mean of `xs`, 0 for none.
fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (n, sum) = xs.fold((0u32, 0.0), |(n, s), x| (n + 1, s + x));
    if n == 0 {
        0.0
    } else {
        sum / f64::from(n)
    }
}
