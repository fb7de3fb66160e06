//! TLS figures: what the sessions negotiated, how long the handshakes took, what the records
//! added on the wire, and the CPU per GB each host spent.

use crate::model::tls::{HandshakeTimes, TlsSummary, TlsTest};
use crate::model::{ServiceDemand, Summary};
use crate::run::View;
use fathom_proto::kind::Figure;
use fathom_proto::plan::TestPlan;

/// Service demand (µs per 1024 bytes) to seconds per 10^9 bytes.
const US_PER_KB_TO_S_PER_GB: f64 = 1e9 / 1024.0 / 1e6;

/// The TLS options as run, for TLS tests.
pub fn echo(p: &TestPlan) -> Option<TlsTest> {
    let t = p.tls.as_ref()?;
    Some(TlsTest {
        version: t.version.name().into(),
        cipher: t.cipher.map(|c| c.name().into()),
        record_size: t.record,
    })
}

/// Fills `summary.tls` for a TLS test.
pub fn fill(v: &View<'_>, s: &mut Summary) {
    let Some(opts) = &v.run.plan.tls else { return };
    let infos: Vec<_> = v
        .run
        .ends
        .iter()
        .filter_map(|e| e.info.tls.as_ref())
        .collect();
    let negotiated = infos.iter().find(|i| !i.version.is_empty());
    // A kind with a connection per transaction (crr) makes a full handshake per transaction.
    let crr = v
        .run
        .plan
        .kind
        .descriptor()
        .adds(Figure::ConnectionsPerSecond);
    let client_times: Vec<u64> = v
        .run
        .ends
        .iter()
        .filter(|e| e.role == crate::run::Role::Client)
        .filter_map(|e| e.info.tls.as_ref())
        .flat_map(|i| i.handshake_ns.iter().copied())
        .collect();
    let (app, wire) = if crr { (None, None) } else { bytes(v) };
    let sd = &s.service_demand_us_per_kb;
    s.tls = Some(TlsSummary {
        version: negotiated.map(|i| i.version.clone()).unwrap_or_default(),
        suite: negotiated.map(|i| i.suite.clone()).unwrap_or_default(),
        record_size: opts.record,
        handshake_us: times(&client_times),
        handshakes_per_second: if crr {
            s.rr().map(|r| r.transactions_per_second)
        } else {
            None
        },
        application_bytes: app,
        wire_bytes: wire,
        overhead_pct: app
            .zip(wire)
            .filter(|(a, _)| *a > 0)
            .map(|(a, w)| (w as f64 - a as f64) / a as f64 * 100.0),
        cpu_s_per_gb: s.rr().is_none().then_some(ServiceDemand {
            local: sd.local * US_PER_KB_TO_S_PER_GB,
            remote: sd.remote * US_PER_KB_TO_S_PER_GB,
        }),
    });
}

fn times(ns: &[u64]) -> Option<HandshakeTimes> {
    (!ns.is_empty()).then(|| HandshakeTimes {
        count: ns.len() as u32,
        mean: ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1e3,
        max: ns.iter().copied().max().unwrap_or(0) as f64 / 1e3,
    })
}

/// (application, wire) bytes over the whole test, both ways, each way counted where it was
/// received (a receiver reads to the end; a sender's last reading may precede its last ACKs);
/// `None` when a socket's TCP_INFO is missing.
fn bytes(v: &View<'_>) -> (Option<u64>, Option<u64>) {
    let mut app = 0u64;
    let mut wire = 0u64;
    for l in v.located.iter().flatten() {
        for (end, pos) in [l.sender, l.receiver] {
            let Some(f) = v.window(end).and_then(|w| w.last.flows.get(pos)) else {
                return (None, None);
            };
            let Some(t) = f.tcp else { return (None, None) };
            app += f.received;
            wire += t.bytes_received;
        }
    }
    (Some(app), Some(wire))
}
