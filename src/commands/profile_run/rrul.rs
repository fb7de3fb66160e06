//! Latency under load, as flent's RRUL test measures it and the IETF IPPM "Responsiveness
//! under Working Conditions" draft defines its RPM: a profile's probe groups timed idle (their
//! paced transaction up to the first barrier) and loaded (their paced transaction after it),
//! beside its load groups' throughput. A probe group is one that has a barrier and a paced
//! (`rate`) transaction after it; every other group is load. What the probe measures follows
//! from its program: a UDP group is a UDP request/response probe, a loaded transaction that
//! connects is a fresh-connection probe, any other a TCP request/response probe on its own
//! connection.

use super::group::GroupRun;
use fathom_proto::profile::{Group, Op, ProfilePlan, Protocol};
use fathom_report::model::profile::{ProfileSummary, TransactionLatency};
use fathom_report::model::Interval;
use fathom_report::responsiveness::{self, Fresh};
use serde::Serialize;

/// What a probe measures.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// A request and its response on a TCP connection of its own, kept open.
    TcpRr,
    /// A datagram and its answer.
    UdpRr,
    /// A new TCP connection per probe: handshake, request, response, close.
    FreshConnection,
}

impl ProbeKind {
    fn label(self) -> &'static str {
        match self {
            ProbeKind::TcpRr => "tcp rr",
            ProbeKind::UdpRr => "udp rr",
            ProbeKind::FreshConnection => "fresh connection",
        }
    }
}

/// A probe's iteration time in one phase.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// Iterations timed.
    pub samples: u64,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// Trimmed mean (the slowest 5% dropped), µs.
    pub trimmed_mean_us: f64,
}

/// One probe group, idle and loaded.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Probe {
    /// The group's name.
    pub group: String,
    /// What it measures.
    pub kind: ProbeKind,
    /// Before the load started (`null`: no iteration timed).
    pub idle: Option<Phase>,
    /// Under load.
    pub loaded: Option<Phase>,
}

/// One load group's throughput while it moved data.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Load {
    /// The group's name.
    pub group: String,
    /// Its payload rate, bits/s: every byte either end read, over the intervals in which it
    /// moved data.
    pub bits_per_second: f64,
}

/// The `rrul` member of `profile run --json`.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Rrul {
    /// The probes, in group order.
    pub probes: Vec<Probe>,
    /// The load groups, in group order.
    pub load: Vec<Load>,
    /// Responsiveness before the load, round trips per minute (`null`: no probe timed).
    pub idle_rpm: Option<f64>,
    /// Responsiveness under load, round trips per minute.
    pub rpm: Option<f64>,
}

/// The probe group `g` is, if it is one: its kind and its idle and loaded transactions (0-based).
pub fn probe_of(g: &Group) -> Option<(ProbeKind, usize, usize)> {
    let txs = &g.program.transactions;
    let barrier = txs.iter().position(|t| t.barrier)?;
    let loaded = (barrier + 1..txs.len()).find(|&t| txs[t].rate.is_some())?;
    let idle = (0..=barrier).rev().find(|&t| txs[t].rate.is_some())?;
    let kind = if g.protocol == Protocol::Udp {
        ProbeKind::UdpRr
    } else if txs[loaded].ops.iter().any(|f| f.op == Op::Connect) {
        ProbeKind::FreshConnection
    } else {
        ProbeKind::TcpRr
    };
    Some((kind, idle, loaded))
}

/// Whether `plan` measures latency under load (it has a probe group).
pub fn has_probes(plan: &ProfilePlan) -> bool {
    plan.groups.iter().any(|g| probe_of(g).is_some())
}

/// Latency under load from the groups' reports; none when `plan` has no probe group.
pub fn rrul(plan: &ProfilePlan, runs: &[GroupRun]) -> Option<Rrul> {
    let mut out = Rrul {
        probes: Vec::new(),
        load: Vec::new(),
        idle_rpm: None,
        rpm: None,
    };
    for (g, r) in plan.groups.iter().zip(runs) {
        let Some((kind, idle, loaded)) = probe_of(g) else {
            out.load.push(Load {
                group: g.name.clone(),
                bits_per_second: moving_rate(&r.report),
            });
            continue;
        };
        let p = r.report.summary.profile();
        out.probes.push(Probe {
            group: g.name.clone(),
            kind,
            idle: p.and_then(|p| phase(p, idle)),
            loaded: p.and_then(|p| phase(p, loaded)),
        });
    }
    if out.probes.is_empty() {
        return None;
    }
    out.idle_rpm = rpm(plan, runs, false);
    out.rpm = rpm(plan, runs, true);
    Some(out)
}

/// Transaction `t`'s (0-based) iteration time in `p`.
fn phase(p: &ProfileSummary, t: usize) -> Option<Phase> {
    let tx: &TransactionLatency = p.transactions.get(t)?;
    let l = tx.latency_us.as_ref()?;
    Some(Phase {
        samples: tx.samples,
        p50_us: l.p50,
        p90_us: l.p90,
        trimmed_mean_us: tx.trimmed_mean_us?,
    })
}

/// A load group's payload rate in each interval of `r` in which it moved data, bits/s: what
/// the agent read (a group that writes) plus what the connecting ends read (one that reads).
pub fn load_rates(r: &fathom_report::Report) -> impl Iterator<Item = (&Interval, f64)> {
    r.intervals.iter().filter_map(|iv| {
        let bits = iv.bits_per_second + iv.profile()?.client_received_bits_per_second;
        (bits > 0.0).then_some((iv, bits))
    })
}

/// A load group's bits/s while it moved data: every payload byte either end read, over the
/// intervals in which it moved any.
fn moving_rate(r: &fathom_report::Report) -> f64 {
    let Some(p) = r.summary.profile() else {
        return 0.0;
    };
    let secs: f64 = load_rates(r)
        .map(|(iv, _)| (iv.measured_end - iv.measured_start).max(0.0))
        .sum();
    match secs {
        s if s > 0.0 => (p.client.received + p.server.received) as f64 * 8.0 / s,
        _ => 0.0,
    }
}

/// Responsiveness in round trips per minute, idle or `loaded`, as docs/profiles.md states
/// (`fathom_report::responsiveness::rpm`): the fresh-connection probes' trimmed means of
/// their handshake and request/response, and the TCP probes' trimmed mean round trip.
fn rpm(plan: &ProfilePlan, runs: &[GroupRun], loaded: bool) -> Option<f64> {
    let (mut fresh, mut own) = (Vec::new(), Vec::new());
    for (g, r) in plan.groups.iter().zip(runs) {
        let (Some((kind, idle, load)), Some(p)) = (probe_of(g), r.report.summary.profile()) else {
            continue;
        };
        let t = if loaded { load } else { idle };
        match kind {
            ProbeKind::FreshConnection => fresh.extend(fresh_ms(p, t + 1)),
            ProbeKind::TcpRr => own.extend(phase(p, t).map(|ph| ph.trimmed_mean_us / 1e3)),
            ProbeKind::UdpRr => {}
        }
    }
    responsiveness::rpm(&fresh, &own)
}

/// A fresh-connection probe's trimmed means in transaction `tx` (from 1), ms: its handshake
/// (`connect`) and its request/response (`write` plus `read`), each flowop's own.
fn fresh_ms(p: &ProfileSummary, tx: usize) -> Option<Fresh> {
    let tm = |name: &str| {
        p.ops
            .iter()
            .find(|o| o.transaction == tx && o.name == name && o.client.count > 0)
            .and_then(|o| o.client.trimmed_mean_us)
            .map(|us| us / 1e3)
    };
    Some(Fresh {
        handshake_ms: tm("connect")?,
        request_ms: tm("write")? + tm("read")?,
    })
}

/// The summary's closing lines.
pub fn table(r: &Rrul) -> String {
    let ms = |us: f64| format!("{:.2} ms", us / 1e3);
    let phase = |p: &Option<Phase>| match p {
        Some(p) => format!("p50 {} p90 {}", ms(p.p50_us), ms(p.p90_us)),
        None => "no probe timed".to_string(),
    };
    let mut s = String::from("latency under load:\n");
    for p in &r.probes {
        s.push_str(&format!(
            "  {} ({}): idle {}; loaded {}\n",
            p.group,
            p.kind.label(),
            phase(&p.idle),
            phase(&p.loaded)
        ));
    }
    for l in &r.load {
        s.push_str(&format!(
            "  {}: {:.1} Mbit/s while moving data\n",
            l.group,
            l.bits_per_second / 1e6
        ));
    }
    let rpm = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    s.push_str(&format!(
        "  responsiveness: {} RPM under load ({} RPM idle)\n",
        rpm(r.rpm),
        rpm(r.idle_rpm)
    ));
    s
}
