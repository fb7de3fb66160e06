//! Turns what the two endpoints measured (cumulative snapshots and their final facts) into a
//! [`Report`]. Every difference and ratio fathom shows is computed here, once.

use crate::model::*;
use crate::cpu::{busy_ticks, cpu_between};
use fathom_proto::plan::{Direction, Limit, TestPlan};
use fathom_proto::sample::{EndpointInfo, FlowSnapshot, Mark, Snapshot, TcpInfo};

/// One end's measurements.
#[derive(Clone, Debug, Default)]
pub struct EndData {
    /// Facts reported at the end.
    pub info: EndpointInfo,
    /// Snapshots in the order taken.
    pub snaps: Vec<Snapshot>,
}

/// Everything known about one run.
#[derive(Clone, Debug)]
pub struct RunData {
    /// The plan that ran.
    pub plan: TestPlan,
    /// The controller's end.
    pub local: EndData,
    /// The agent's end.
    pub remote: EndData,
    /// The agent's address.
    pub agent: String,
    /// Whether the agent ran in-process.
    pub embedded: bool,
    /// Wall-clock start, Unix seconds.
    pub started_unix_s: f64,
    /// Agent clock minus controller clock, ns.
    pub clock_offset_ns: i64,
    /// Round trip of the best clock probe, ns.
    pub control_rtt_ns: u64,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// Builds the report of a run.
pub fn build(run: &RunData) -> Report {
    let plan = &run.plan;
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        fathom_version: env!("CARGO_PKG_VERSION").to_string(),
        test: echo(run),
        hosts: Hosts { local: host(&run.local.info), remote: host(&run.remote.info) },
        error: run.error.clone(),
        ..Default::default()
    };
    let (lw, rw) = (Window::of(&run.local.snaps), Window::of(&run.remote.snaps));
    let (Some(lw), Some(rw)) = (lw, rw) else {
        report.error.get_or_insert_with(|| "the test ended before its measured window began".into());
        return report;
    };
    let ends = Ends { run, lw, rw };
    report.flows = (0..plan.flows.len()).map(|i| ends.flow(i)).collect();
    report.summary = ends.summary(&report.flows);
    crate::rr::fill(run, lw, rw, &mut report.summary, &mut report.flows);
    report.intervals = crate::intervals::build(run);
    report.warnings = crate::warnings::collect(run, &report);
    report
}

/// The measured window of one end: its first and last snapshots.
#[derive(Clone, Copy)]
pub(crate) struct Window<'a> {
    pub start: &'a Snapshot,
    pub end: &'a Snapshot,
    /// Total counters (the final snapshot).
    pub last: &'a Snapshot,
}

impl<'a> Window<'a> {
    pub fn of(snaps: &'a [Snapshot]) -> Option<Self> {
        let start = snaps.iter().find(|s| s.mark == Mark::WindowStart)?;
        let last = snaps.last()?;
        let end = snaps.iter().find(|s| s.mark == Mark::WindowEnd).unwrap_or(last);
        Some(Window { start, end, last })
    }

    pub fn seconds(&self) -> f64 {
        (self.end.t_ns - self.start.t_ns).max(0) as f64 / 1e9
    }

    fn flow(&self, i: usize) -> (FlowSnapshot, FlowSnapshot) {
        let get = |s: &Snapshot| s.flows.get(i).copied().unwrap_or_default();
        (get(self.start), get(self.end))
    }
}

/// Bits per second, 0 for an empty span.
pub(crate) fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// a / b, 0 when b is 0.
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a.is_finite() {
        a / b
    } else {
        0.0
    }
}

/// The direction's name in results.
pub(crate) fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
    }
}

struct Ends<'a> {
    run: &'a RunData,
    lw: Window<'a>,
    rw: Window<'a>,
}

impl<'a> Ends<'a> {
    /// (sender end, receiver end) of flows going `d`, with their windows.
    fn roles(&self, d: Direction) -> ((&'a EndData, Window<'a>), (&'a EndData, Window<'a>)) {
        let l = (&self.run.local, self.lw);
        let r = (&self.run.remote, self.rw);
        match d {
            Direction::Forward => (l, r),
            Direction::Reverse => (r, l),
        }
    }

    fn flow(&self, i: usize) -> FlowResult {
        let f = self.run.plan.flows[i];
        let ((s_end, sw), (r_end, rw)) = self.roles(f.dir);
        let (s0, s1) = sw.flow(i);
        let (r0, r1) = rw.flow(i);
        let (secs, ssecs) = (rw.seconds(), sw.seconds());
        let bytes = r1.received.saturating_sub(r0.received);
        let sender_bytes = s1.sent.saturating_sub(s0.sent);
        let st = tcp_delta(s0.tcp, s1.tcp);
        let rt = tcp_delta(r0.tcp, r1.tcp);
        let pct = |us: u64| ratio(us as f64 * 1e-6, ssecs) * 100.0;
        let sinfo = s_end.info.flows.get(i).cloned().unwrap_or_default();
        let rinfo = r_end.info.flows.get(i).cloned().unwrap_or_default();
        FlowResult {
            id: f.id,
            direction: dir_name(f.dir).into(),
            bits_per_second: rate(bytes, secs),
            sender_bits_per_second: rate(sender_bytes, ssecs),
            bytes,
            sender_bytes,
            total_bytes_received: rw.last.flows.get(i).map_or(0, |x| x.received),
            total_bytes_sent: sw.last.flows.get(i).map_or(0, |x| x.sent),
            retransmits: st.retransmits as u64,
            rtt_us: st.rtt_us,
            rttvar_us: st.rttvar_us,
            min_rtt_us: st.min_rtt_us,
            cwnd: st.snd_cwnd,
            mss: st.snd_mss,
            data_segs_per_ack: segs_per_ack(&rt),
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
            ..Default::default()
        }
    }

    fn summary(&self, flows: &[FlowResult]) -> Summary {
        let plan = &self.run.plan;
        let dirs: Vec<Direction> = [Direction::Forward, Direction::Reverse]
            .into_iter()
            .filter(|d| plan.flows_in(*d).next().is_some())
            .collect();
        let directions: Vec<DirectionResult> = dirs.iter().map(|&d| self.direction(d, flows)).collect();
        let n = flows.len().max(1) as f64;
        let busy: f64 = flows.iter().map(|f| f.busy_pct).sum::<f64>() / n;
        let seconds = dirs.iter().map(|&d| self.roles(d).1 .1.seconds()).fold(0.0, f64::max);
        let bytes: u64 = flows.iter().map(|f| f.bytes).sum();
        let local = self.cpu(&self.run.local, self.lw);
        let remote = self.cpu(&self.run.remote, self.rw);
        let kb = bytes as f64 / 1024.0;
        let demand = |e: &EndData, w: Window<'_>| {
            let hz = e.info.host.clock_ticks.max(1) as f64;
            ratio(busy_ticks(&w.start.cpu, &w.end.cpu) as f64 / hz * 1e6, kb)
        };
        Summary {
            bits_per_second: directions.iter().map(|d| d.bits_per_second).sum(),
            sender_bits_per_second: directions.iter().map(|d| d.sender_bits_per_second).sum(),
            bytes,
            sender_bytes: flows.iter().map(|f| f.sender_bytes).sum(),
            total_bytes_received: flows.iter().map(|f| f.total_bytes_received).sum(),
            total_bytes_sent: flows.iter().map(|f| f.total_bytes_sent).sum(),
            seconds,
            retransmits: flows.iter().map(|f| f.retransmits).sum(),
            service_demand_us_per_kb: ServiceDemand {
                local: demand(&self.run.local, self.lw),
                remote: demand(&self.run.remote, self.rw),
            },
            cpu: CpuPair { local, remote },
            directions: if dirs.len() > 1 { directions } else { Vec::new() },
            buffers: self.buffers(flows),
            tcp: TcpSummary {
                rtt_us: mean_of_known(flows.iter().map(|f| f.rtt_us)),
                rttvar_us: mean_of_known(flows.iter().map(|f| f.rttvar_us)),
                data_segs_per_ack: self.segs_per_ack_all(),
                rwnd_limited_pct: flows.iter().map(|f| f.rwnd_limited_pct).sum::<f64>() / n,
                sndbuf_limited_pct: flows.iter().map(|f| f.sndbuf_limited_pct).sum::<f64>() / n,
                busy_pct: busy,
            },
            ..Default::default()
        }
    }

    fn direction(&self, d: Direction, flows: &[FlowResult]) -> DirectionResult {
        let ((_, sw), (_, rw)) = self.roles(d);
        let mine = || flows.iter().filter(|f| f.direction == dir_name(d));
        let bytes: u64 = mine().map(|f| f.bytes).sum();
        let sent: u64 = mine().map(|f| f.sender_bytes).sum();
        DirectionResult {
            direction: dir_name(d).into(),
            bits_per_second: rate(bytes, rw.seconds()),
            sender_bits_per_second: rate(sent, sw.seconds()),
            bytes,
            retransmits: mine().map(|f| f.retransmits).sum(),
        }
    }

    fn segs_per_ack_all(&self) -> f64 {
        let mut total = TcpInfo::default();
        for (i, f) in self.run.plan.flows.iter().enumerate() {
            let (r0, r1) = self.roles(f.dir).1 .1.flow(i);
            let d = tcp_delta(r0.tcp, r1.tcp);
            total.data_segs_in += d.data_segs_in;
            total.segs_out += d.segs_out;
            total.data_segs_out += d.data_segs_out;
        }
        segs_per_ack(&total)
    }

    fn cpu(&self, end: &EndData, w: Window<'_>) -> Cpu {
        let hz = end.info.host.clock_ticks.max(1) as f64;
        cpu_between(&w.start.cpu, &w.end.cpu, hz, w.seconds(), self.run.embedded)
    }

    fn buffers(&self, flows: &[FlowResult]) -> Buffers {
        let s = &self.run.plan.socket;
        let first = flows.first().cloned().unwrap_or_default();
        let clamped = [&self.run.local.info, &self.run.remote.info].iter().any(|e| {
            let over = |req: Option<u32>, max: u64| req.is_some_and(|r| r as u64 > max);
            over(s.sndbuf, e.limits.wmem_max) || over(s.rcvbuf, e.limits.rmem_max)
        });
        Buffers {
            requested: BufferRequest { send: s.sndbuf.map(u64::from), recv: s.rcvbuf.map(u64::from) },
            effective_send: first.sndbuf as u64,
            effective_recv: first.rcvbuf as u64,
            final_send: first.sndbuf_end as u64,
            final_recv: first.rcvbuf_end as u64,
            clamped,
        }
    }
}

/// Counters of `b` minus those of `a`; gauges (rtt, cwnd, rates) as in `b`.
pub(crate) fn tcp_delta(a: Option<TcpInfo>, b: Option<TcpInfo>) -> TcpInfo {
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    TcpInfo {
        retransmits: b.retransmits.saturating_sub(a.retransmits),
        segs_out: b.segs_out.wrapping_sub(a.segs_out),
        segs_in: b.segs_in.wrapping_sub(a.segs_in),
        data_segs_out: b.data_segs_out.wrapping_sub(a.data_segs_out),
        data_segs_in: b.data_segs_in.wrapping_sub(a.data_segs_in),
        busy_time_us: b.busy_time_us.saturating_sub(a.busy_time_us),
        rwnd_limited_us: b.rwnd_limited_us.saturating_sub(a.rwnd_limited_us),
        sndbuf_limited_us: b.sndbuf_limited_us.saturating_sub(a.sndbuf_limited_us),
        bytes_acked: b.bytes_acked.saturating_sub(a.bytes_acked),
        bytes_received: b.bytes_received.saturating_sub(a.bytes_received),
        bytes_retrans: b.bytes_retrans.saturating_sub(a.bytes_retrans),
        ..b
    }
}

/// Data segments received per pure ACK sent, from the receiver's counters.
fn segs_per_ack(recv: &TcpInfo) -> f64 {
    let acks = recv.segs_out.saturating_sub(recv.data_segs_out);
    ratio(recv.data_segs_in as f64, acks as f64)
}

fn host(e: &EndpointInfo) -> HostResult {
    HostResult {
        hostname: e.host.hostname.clone(),
        kernel: e.host.kernel.clone(),
        cpus: e.host.cpus,
        version: e.host.version.clone(),
        wait: e.wait.clone(),
        threads: e
            .threads
            .iter()
            .map(|t| ThreadResult { pinned_cpu: t.pinned, last_cpu: t.last_cpu, flows: t.flows, cpu_s: t.cpu_ns as f64 / 1e9 })
            .collect(),
        rmem_max: e.limits.rmem_max,
        wmem_max: e.limits.wmem_max,
    }
}

fn echo(run: &RunData) -> TestEcho {
    let p = &run.plan;
    let fwd = p.flows_in(Direction::Forward).count() as u32;
    let rev = p.flows_in(Direction::Reverse).count() as u32;
    TestEcho {
        kind: p.kind.name().into(),
        agent: run.agent.clone(),
        embedded_agent: run.embedded,
        direction: match (fwd > 0, rev > 0) {
            (true, true) => "bidir",
            (false, true) => "reverse",
            _ => "forward",
        }
        .into(),
        parallel: fwd.max(rev),
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
        request_size: p.rr.as_ref().map(|r| r.request),
        response_size: p.rr.as_ref().map(|r| r.response),
        burst: p.rr.as_ref().filter(|r| r.rate.is_none()).map(|r| r.burst),
        rate: p.rr.as_ref().and_then(|r| r.rate),
        transactions: match p.limit {
            Limit::Transactions(n) => Some(n),
            _ => None,
        },
        quickack: p.socket.quickack,
        busy_poll: p.socket.busy_poll,
        udp_timeout_ms: p.rr.as_ref().filter(|_| p.kind == fathom_proto::plan::KindId::UdpRr).map(|r| r.udp_timeout_ns as f64 / 1e6),
        started_unix_s: run.started_unix_s,
        clock_offset_us: run.clock_offset_ns as f64 / 1e3,
        control_rtt_us: run.control_rtt_ns as f64 / 1e3,
    }
}

/// Mean of the values that were measured (non-zero); 0 if none were.
fn mean_of_known(v: impl Iterator<Item = u32>) -> f64 {
    let (sum, n) = v.filter(|&x| x > 0).fold((0.0, 0u32), |(s, n), x| (s + f64::from(x), n + 1));
    ratio(sum, f64::from(n))
}
