//! Figures across hosts: the cluster studies' aggregate (total bytes over the overall run time),
//! the aggregate while every flow ran, and the start skew between client hosts.

use crate::floor::rate;
use crate::model::{FlowResult, GroupResult, Summary};
use crate::run::{Role, View};
use fathom_proto::plan::Direction;
use fathom_proto::sample::Snapshot;

/// Fills the aggregates and the skew.
pub fn fill(v: &View<'_>, s: &mut Summary) {
    let flows: Vec<_> = v.located.iter().flatten().collect();
    let first_sent = flows
        .iter()
        .filter_map(|l| v.info(l.sender).first_byte_ns)
        .min();
    let last_received = flows
        .iter()
        .filter_map(|l| v.info(l.receiver).last_byte_ns)
        .max();
    if let (Some(a), Some(b)) = (first_sent, last_received) {
        s.aggregate_bits_per_second =
            rate(s.transfer.total_bytes_received, (b - a).max(0) as f64 / 1e9);
    }
    let spans: Vec<(i64, i64)> = flows
        .iter()
        .filter_map(|l| {
            let i = v.info(l.receiver);
            Some((i.first_byte_ns?, i.last_byte_ns?))
        })
        .collect();
    let (from, to) = (
        spans.iter().map(|x| x.0).max(),
        spans.iter().map(|x| x.1).min(),
    );
    if let (Some(from), Some(to)) = (from, to) {
        if to > from && spans.len() == flows.len() {
            let bytes: f64 = flows
                .iter()
                .map(|l| {
                    let snaps = &v.run.ends[l.receiver.0].snaps;
                    received_at(snaps, l.receiver.1, to) - received_at(snaps, l.receiver.1, from)
                })
                .sum();
            s.overlap_bits_per_second = bytes * 8.0 / ((to - from) as f64 / 1e9);
        }
    }
    s.start_skew_us = v.run.multi_host().then(|| skew(v)).flatten();
}

/// Per group of client hosts, in the order groups first appear: the bytes received on the
/// flows of its hosts over their first byte sent to their last byte received.
pub fn groups(v: &View<'_>, flows: &[FlowResult]) -> Vec<GroupResult> {
    let mut out: Vec<GroupResult> = Vec::new();
    let ends = &v.run.ends;
    let group = |i: usize| {
        ends[i]
            .group
            .as_deref()
            .filter(|_| ends[i].role == Role::Client)
    };
    for name in (0..ends.len()).filter_map(group) {
        match out.iter_mut().find(|g| g.name == name) {
            Some(g) => g.hosts += 1,
            None => out.push(GroupResult {
                name: name.to_string(),
                hosts: 1,
                ..Default::default()
            }),
        }
    }
    for g in &mut out {
        let member = |end: usize| group(end) == Some(g.name.as_str());
        let mine: Vec<_> = flows
            .iter()
            .zip(&v.located)
            .filter_map(|(f, l)| {
                l.filter(|l| member(l.sender.0) || member(l.receiver.0))
                    .map(|l| (f, l))
            })
            .collect();
        g.bytes = mine
            .iter()
            .map(|(f, _)| f.transfer.total_bytes_received)
            .sum();
        let first = mine
            .iter()
            .filter_map(|(_, l)| v.info(l.sender).first_byte_ns)
            .min();
        let last = mine
            .iter()
            .filter_map(|(_, l)| v.info(l.receiver).last_byte_ns)
            .max();
        if let (Some(a), Some(b)) = (first, last) {
            g.seconds = (b - a).max(0) as f64 / 1e9;
            g.bits_per_second = rate(g.bytes, g.seconds);
        }
    }
    out
}

/// Bytes flow `pos` had received at `t` (ns after t0), interpolated between snapshots.
fn received_at(snaps: &[Snapshot], pos: usize, t: i64) -> f64 {
    let at = |s: &Snapshot| (s.t_ns, s.flows.get(pos).map_or(0, |f| f.received) as f64);
    let mut prev = (i64::MIN, 0.0);
    for s in snaps {
        let (ts, b) = at(s);
        if ts >= t {
            if prev.0 == i64::MIN || ts == prev.0 {
                return b;
            }
            return prev.1 + (b - prev.1) * (t - prev.0) as f64 / (ts - prev.0) as f64;
        }
        prev = (ts, b);
    }
    prev.1
}

/// Latest minus earliest first byte over the client hosts, µs. Forward flows are timed where
/// they arrive, on the server's one clock; reverse flows on each client's clock, which the
/// controller's offset estimate aligned at the start.
fn skew(v: &View<'_>) -> Option<f64> {
    let starts: Vec<i64> = (0..v.run.ends.len())
        .filter(|&i| v.run.ends[i].role == Role::Client)
        .filter_map(|c| {
            let mine = || {
                v.run
                    .plan
                    .flows
                    .iter()
                    .zip(&v.located)
                    .filter_map(move |(f, l)| {
                        l.filter(|l| l.sender.0 == c || l.receiver.0 == c)
                            .map(|l| (f.dir, l))
                    })
            };
            let forward = mine()
                .filter(|(d, _)| *d == Direction::Forward)
                .filter_map(|(_, l)| v.info(l.receiver).first_byte_ns)
                .min();
            forward.or_else(|| {
                mine()
                    .filter_map(|(_, l)| v.info(l.receiver).first_byte_ns)
                    .min()
            })
        })
        .collect();
    let (lo, hi) = (starts.iter().min()?, starts.iter().max()?);
    Some((hi - lo) as f64 / 1e3)
}
