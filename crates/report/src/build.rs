//! Turns what the ends measured (cumulative snapshots and their final facts) into a [`Report`].
//! Every difference and ratio fathom shows is computed here and in the modules it calls, once.

use crate::cpu::{busy_us, cpu_between};
use crate::floor::{rate, ratio, segs_per_ack, tcp_delta, total};
use crate::model::*;
use crate::run::{EndData, Role, RunData, View, Window};
use fathom_proto::plan::{Direction, Limit};
use fathom_proto::sample::{EndpointInfo, TcpInfo};

/// Builds the report of a run.
pub fn build(run: &RunData) -> Report {
    let view = View::new(run);
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        fathom_version: env!("CARGO_PKG_VERSION").to_string(),
        test: echo(run),
        wan: run.wan.clone(),
        ipsec: run.ipsec.clone(),
        error: run.error.clone(),
        ..Default::default()
    };
    if view.window(0).is_none() || (1..run.ends.len()).all(|i| view.window(i).is_none()) {
        report.hosts = (0..run.ends.len()).map(|i| host(&view, i, &[])).collect();
        report
            .error
            .get_or_insert_with(|| "the test ended before its measured window began".into());
        return report;
    }
    report.flows = (0..run.plan.flows.len()).map(|i| flow(&view, i)).collect();
    report.summary = summary(&view, &report.flows);
    crate::hosts::fill(&view, &mut report.summary);
    report.groups = crate::hosts::groups(&view, &report.flows);
    // The kind's figures first: each host's transactions/s is the sum of its flows'.
    crate::sections::of_plan(&run.plan).fill(&view, &mut report.summary, &mut report.flows);
    report.hosts = (0..run.ends.len())
        .map(|i| host(&view, i, &report.flows))
        .collect();
    crate::tls::fill(&view, &mut report.summary);
    report.intervals = crate::intervals::build(&view);
    report.warnings = crate::warnings::collect(run, &report);
    report
}

/// The direction's name in results.
pub(crate) fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
    }
}

fn flow(v: &View<'_>, i: usize) -> FlowResult {
    let f = v.run.plan.flows[i];
    let base = FlowResult {
        id: f.id,
        direction: dir_name(f.dir).into(),
        ..Default::default()
    };
    let Some(l) = v.located[i] else { return base };
    let (Some(sw), Some(rw)) = (v.window(l.sender.0), v.window(l.receiver.0)) else {
        return base;
    };
    let ((s0, s1), (r0, r1)) = (sw.flow(l.sender.1), rw.flow(l.receiver.1));
    let ssecs = sw.seconds();
    let bytes = r1.received.saturating_sub(r0.received);
    let sender_bytes = s1.sent.saturating_sub(s0.sent);
    let st = tcp_delta(s0.tcp, s1.tcp);
    let rt = tcp_delta(r0.tcp, r1.tcp);
    let pct = |us: u64| ratio(us as f64 * 1e-6, ssecs) * 100.0;
    let (sinfo, rinfo) = (v.info(l.sender), v.info(l.receiver));
    FlowResult {
        transfer: Transfer {
            bits_per_second: rate(bytes, rw.seconds()),
            sender_bits_per_second: rate(sender_bytes, ssecs),
            bytes,
            sender_bytes,
            total_bytes_received: rw.last.flows.get(l.receiver.1).map_or(0, |x| x.received),
            total_bytes_sent: sw.last.flows.get(l.sender.1).map_or(0, |x| x.sent),
        },
        retransmits: st.retransmits as u64,
        rtt_us: st.rtt_us,
        rttvar_us: st.rttvar_us,
        min_rtt_us: st.min_rtt_us,
        cwnd: st.snd_cwnd,
        window: st.snd_wnd,
        mss: st.snd_mss,
        data_segs_per_ack: segs_per_ack(v.run.plan.kind.id(), &rt),
        delivery_rate_bps: st.delivery_rate as f64 * 8.0,
        rwnd_limited_pct: pct(st.rwnd_limited_us),
        sndbuf_limited_pct: pct(st.sndbuf_limited_us),
        busy_pct: pct(st.busy_time_us),
        sndbuf: sinfo.sndbuf,
        rcvbuf: rinfo.rcvbuf,
        sndbuf_end: sinfo.sndbuf_end,
        rcvbuf_end: rinfo.rcvbuf_end,
        cc: sinfo.cc,
        sender: sinfo.local,
        receiver: rinfo.local,
        ..base
    }
}

fn summary(v: &View<'_>, flows: &[FlowResult]) -> Summary {
    let run = v.run;
    let dirs: Vec<Direction> = [Direction::Forward, Direction::Reverse]
        .into_iter()
        .filter(|d| run.plan.flows_in(*d).next().is_some())
        .collect();
    let directions: Vec<DirectionResult> = dirs.iter().map(|&d| direction(v, d, flows)).collect();
    let n = flows.len().max(1) as f64;
    let bytes: u64 = flows.iter().map(|f| f.transfer.bytes).sum();
    let (client, server) = (run.ends.len().min(2) - 1, 0);
    let cpu_of = |i: usize| {
        v.window(i)
            .map(|w| cpu(&run.ends[i], &w, run.embedded))
            .unwrap_or_default()
    };
    let kb = bytes as f64 / 1024.0;
    let demand = |i: usize| {
        v.window(i)
            .map_or(0.0, |w| ratio(busy_us(&run.ends[i], &w), kb))
    };
    Summary {
        transfer: Transfer {
            bits_per_second: total(directions.iter().map(|d| d.bits_per_second)),
            sender_bits_per_second: total(directions.iter().map(|d| d.sender_bits_per_second)),
            bytes,
            sender_bytes: flows.iter().map(|f| f.transfer.sender_bytes).sum(),
            total_bytes_received: flows.iter().map(|f| f.transfer.total_bytes_received).sum(),
            total_bytes_sent: flows.iter().map(|f| f.transfer.total_bytes_sent).sum(),
        },
        seconds: dirs
            .iter()
            .map(|&d| v.longest(&v.receivers(d)))
            .fold(0.0, f64::max),
        retransmits: flows.iter().map(|f| f.retransmits).sum(),
        service_demand_us_per_kb: ServiceDemand {
            local: demand(client),
            remote: demand(server),
        },
        cpu: CpuPair {
            local: cpu_of(client),
            remote: cpu_of(server),
        },
        directions: if dirs.len() > 1 {
            directions
        } else {
            Vec::new()
        },
        buffers: buffers(run, flows),
        tcp: TcpSummary {
            rtt_us: mean_of_known(flows.iter().map(|f| f.rtt_us)),
            rttvar_us: mean_of_known(flows.iter().map(|f| f.rttvar_us)),
            data_segs_per_ack: segs_per_ack_all(v),
            rwnd_limited_pct: flows.iter().map(|f| f.rwnd_limited_pct).sum::<f64>() / n,
            sndbuf_limited_pct: flows.iter().map(|f| f.sndbuf_limited_pct).sum::<f64>() / n,
            busy_pct: flows.iter().map(|f| f.busy_pct).sum::<f64>() / n,
        },
        ..Default::default()
    }
}

fn direction(v: &View<'_>, d: Direction, flows: &[FlowResult]) -> DirectionResult {
    let mine = || flows.iter().filter(|f| f.direction == dir_name(d));
    let bytes: u64 = mine().map(|f| f.transfer.bytes).sum();
    let sent: u64 = mine().map(|f| f.transfer.sender_bytes).sum();
    DirectionResult {
        direction: dir_name(d).into(),
        bits_per_second: rate(bytes, v.longest(&v.receivers(d))),
        sender_bits_per_second: rate(sent, v.longest(&v.senders(d))),
        bytes,
        retransmits: mine().map(|f| f.retransmits).sum(),
    }
}

fn segs_per_ack_all(v: &View<'_>) -> f64 {
    let mut total = TcpInfo::default();
    for l in v.located.iter().flatten() {
        if let Some(w) = v.window(l.receiver.0) {
            let (r0, r1) = w.flow(l.receiver.1);
            let d = tcp_delta(r0.tcp, r1.tcp);
            total.data_segs_in += d.data_segs_in;
            total.segs_out += d.segs_out;
            total.data_segs_out += d.data_segs_out;
        }
    }
    segs_per_ack(v.run.plan.kind.id(), &total)
}

/// CPU of an end over its window.
pub(crate) fn cpu(e: &EndData, w: &Window<'_>, embedded: bool) -> Cpu {
    let hz = e.info.host.clock_ticks.max(1) as f64;
    cpu_between(&w.start.cpu, &w.end.cpu, hz, w.seconds(), embedded)
}

fn buffers(run: &RunData, flows: &[FlowResult]) -> Buffers {
    let s = &run.plan.socket;
    let first = flows.first().cloned().unwrap_or_default();
    let clamped = run.ends.iter().any(|e| {
        let over = |req: Option<u32>, max: u64| req.is_some_and(|r| r as u64 > max);
        over(s.sndbuf, e.info.limits.wmem_max) || over(s.rcvbuf, e.info.limits.rmem_max)
    });
    Buffers {
        requested: BufferRequest {
            send: s
                .sndbuf
                .or_else(|| run.ends.iter().find_map(|e| e.info.chosen_sndbuf))
                .map(u64::from),
            recv: s.rcvbuf.map(u64::from),
        },
        effective_send: first.sndbuf as u64,
        effective_recv: first.rcvbuf as u64,
        final_send: first.sndbuf_end as u64,
        final_recv: first.rcvbuf_end as u64,
        clamped,
    }
}

/// One host's facts and figures; `flows` empty when the window never began.
fn host(v: &View<'_>, i: usize, flows: &[FlowResult]) -> HostResult {
    let e = &v.run.ends[i];
    let info: &EndpointInfo = &e.info;
    let mine = || {
        flows
            .iter()
            .zip(&v.located)
            .filter(move |(_, l)| l.is_some_and(|l| l.sender.0 == i || l.receiver.0 == i))
            .map(|(f, _)| f)
    };
    let first_send = v
        .located
        .iter()
        .flatten()
        .filter(|l| l.sender.0 == i)
        .filter_map(|l| v.info(l.sender).first_byte_ns)
        .min();
    HostResult {
        name: e.name.clone(),
        group: e.group.clone(),
        role: match e.role {
            Role::Server => "server",
            Role::Client => "client",
        }
        .into(),
        in_process: e.in_process,
        hostname: info.host.hostname.clone(),
        kernel: info.host.kernel.clone(),
        cpus: info.host.cpus,
        version: info.host.version.clone(),
        wait: info.wait.clone(),
        read_size: info.read_size,
        threads: info
            .threads
            .iter()
            .map(|t| ThreadResult {
                pinned_cpu: t.pinned,
                last_cpu: t.last_cpu,
                flows: t.flows,
                cpu_s: t.cpu_ns as f64 / 1e9,
            })
            .collect(),
        rmem_max: info.limits.rmem_max,
        wmem_max: info.limits.wmem_max,
        bits_per_second: total(mine().map(|f| f.transfer.bits_per_second)),
        sender_bits_per_second: total(mine().map(|f| f.transfer.sender_bits_per_second)),
        bytes: mine().map(|f| f.transfer.bytes).sum(),
        transactions_per_second: crate::sections::of_plan(&v.run.plan)
            .transactions_per_second(&mut mine()),
        cpu: v
            .window(i)
            .map(|w| cpu(e, &w, v.run.embedded))
            .unwrap_or_default(),
        clock_offset_us: e.clock_offset_ns as f64 / 1e3,
        control_rtt_us: e.control_rtt_ns as f64 / 1e3,
        first_send_us: first_send.map(|ns| ns as f64 / 1e3),
        measurement_cpu_s: info.sampler_cpu_ns as f64 / 1e9,
        measurement_percent: {
            let span = e.snaps.last().map_or(0.0, |s| s.t_ns.max(0) as f64 / 1e9);
            ratio(
                info.sampler_cpu_ns as f64 / 1e9 * 100.0,
                span * f64::from(info.host.cpus.max(1)),
            )
        },
        error: info.error.clone(),
    }
}

pub(crate) fn echo(run: &RunData) -> TestEcho {
    let p = &run.plan;
    let fwd = p.flows_in(Direction::Forward).count() as u32;
    let rev = p.flows_in(Direction::Reverse).count() as u32;
    let clients: Vec<String> = run
        .ends
        .iter()
        .filter(|e| e.role == Role::Client && !e.in_process)
        .map(|e| e.name.clone())
        .collect();
    let mut echo = TestEcho {
        kind: p.kind.name().into(),
        agent: run.server().name.clone(),
        embedded_agent: run.embedded,
        direction: match (fwd > 0, rev > 0) {
            (true, true) => "bidir",
            (false, true) => "reverse",
            _ => "forward",
        }
        .into(),
        parallel: fwd.max(rev) / (clients.len().max(1) as u32),
        clients,
        duration_s: match p.limit {
            Limit::Time { duration_ns } => Some(duration_ns as f64 / 1e9),
            _ => None,
        },
        bytes: match p.limit {
            Limit::Bytes(b) => Some(b),
            _ => None,
        },
        omit_s: p.omit_ns as f64 / 1e9,
        interval_s: p.interval_ns as f64 / 1e9,
        write_size: p.write_size,
        read_size: p.read_size,
        zerocopy: p.zerocopy,
        nodelay: p.socket.nodelay,
        cc: p.socket.cc.clone(),
        mss: p.socket.mss,
        sndbuf: p.socket.sndbuf,
        rcvbuf: p.socket.rcvbuf,
        section: None,
        tls: crate::tls::echo(p),
        quickack: p.socket.quickack,
        busy_poll: p.socket.busy_poll,
        started_unix_s: run.started_unix_s,
    };
    crate::sections::of_plan(p).echo(p, &mut echo);
    echo
}

/// Mean of the values that were measured (non-zero); 0 if none were.
fn mean_of_known(v: impl Iterator<Item = u32>) -> f64 {
    let (sum, n) = v
        .filter(|&x| x > 0)
        .fold((0.0, 0u32), |(s, n), x| (s + f64::from(x), n + 1));
    ratio(sum, f64::from(n))
}
