//! A profile group's figures of one interval (`intervals[].profile`): its iterations and
//! their time at the connecting ends, and what those ends read (a group that reads, as the
//! download half of a latency-under-load profile does, moves its data towards them, which the
//! interval's receiver figures, the agent's, do not show).

use super::model::ProfileInterval;
use crate::build::ratio;
use crate::run::{Role, View};
use crate::section::Span;
use crate::sections::rr::figures::{empty, merge_into};

/// The interval's figures, from the connecting ends' `span`s.
pub fn interval(v: &View<'_>, span: &Span<'_>) -> ProfileInterval {
    let mut hist = empty();
    let (mut ips, mut read_bps) = (0.0, 0.0);
    let clients = v.run.ends.iter().enumerate();
    for (i, _) in clients.filter(|(_, e)| e.role == Role::Client) {
        let Some((a, b)) = span(i) else { continue };
        let secs = (b.t_ns.saturating_sub(a.t_ns)) as f64 / 1e9;
        let sum = |s: &fathom_proto::sample::Snapshot, pick: fn(&_) -> u64| -> u64 {
            s.flows.iter().map(pick).sum()
        };
        let iterations = sum(b, |f| f.transactions).saturating_sub(sum(a, |f| f.transactions));
        let read = sum(b, |f| f.received).saturating_sub(sum(a, |f| f.received));
        ips += ratio(iterations as f64, secs);
        read_bps += ratio(read as f64 * 8.0, secs);
        merge_into(&mut hist, std::slice::from_ref(b));
    }
    let at = |q: f64| (!hist.is_empty()).then(|| hist.value_at_quantile(q) as f64 / 1e3);
    ProfileInterval {
        iterations_per_second: ips,
        latency_p50_us: at(0.5),
        latency_p90_us: at(0.9),
        client_received_bits_per_second: read_bps,
    }
}
