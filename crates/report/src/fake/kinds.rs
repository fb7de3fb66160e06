//! The fake run as every kind, for golden tests of each kind's sections: the stream run of
//! [`run_data`](super::run_data) with the kind's options in its plan and the kind's counters
//! in its snapshots, all exact.

use crate::run::{Role, RunData};
use fathom_proto::file::{FileCounters, FileOptions, SendMode, Verify};
use fathom_proto::plan::{KindId, KindPlan, RrOptions};
use fathom_proto::sample::{FlowKindCounters, HostKindCounters};
use fathom_proto::tls::{TlsInfo, TlsOptions};
use fathom_proto::udp::{UdpCounters, UdpHostCounters, UdpOptions};
use hdrhistogram::serialization::{Serializer, V2Serializer};

/// Transactions every rr flow completes per second at both ends.
pub const TRANSACTIONS_PER_S: u64 = 1000;
/// Datagrams every UDP flow's sender sends per second; its receiver gets 990 and counts 11 gaps.
pub const DATAGRAMS_PER_S: u64 = 1000;

/// The fake run (`flows` flows, one way) as a request/response kind (`Rr`, `Crr` or `UdpRr`):
/// 1,000 transactions a second per flow, latencies of 40 to 400 µs recorded by the client.
pub fn request_response(kind: KindId, flows: u32) -> RunData {
    let mut run = super::run_data(flows, false);
    let rr = RrOptions {
        request: 64,
        response: 128,
        burst: 1,
        rate: None,
        udp_timeout_ns: 2_000_000,
        test_drop_every: None,
    };
    run.plan.kind = KindPlan::request_response(kind, rr).unwrap_or_default();
    for end in &mut run.ends {
        let client = end.role == Role::Client;
        for (k, snap) in end.snaps.iter_mut().enumerate() {
            let t = snap.t_ns as u64 / 1_000_000;
            snap.flows
                .iter_mut()
                .for_each(|f| f.transactions = t * TRANSACTIONS_PER_S / 1000);
            if client && k > 0 {
                snap.latency = latencies(k as u64);
            }
        }
    }
    run
}

/// A serialized histogram of 100 latencies, 40 µs to 400 µs, shifted by `k` µs.
pub(super) fn latencies(k: u64) -> Option<Vec<u8>> {
    let mut h = crate::sections::rr::figures::empty();
    for i in 1..=100u64 {
        h.record((36 + 4 * i + k) * 1000).ok()?;
    }
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(&h, &mut bytes).ok()?;
    Some(bytes)
}

/// The fake run (one flow) as a UDP stream: 1,000 datagrams a second sent, 990 received, 11
/// sequence gaps, 2 reordered and 1 duplicate a second; the receiving host drops 5 a second.
pub fn udp() -> RunData {
    let mut run = super::run_data(1, false);
    run.plan.kind = KindPlan::Udp(UdpOptions {
        size: 1472,
        batch: 64,
        rate_bps: Some(20_000_000.0),
        pps: None,
        blast: false,
        faults: None,
        gso: false,
    });
    for end in &mut run.ends {
        let sends = end.role == Role::Client;
        for (k, snap) in end.snaps.iter_mut().enumerate() {
            let k = k as u64;
            snap.flows[0].kind = Some(Box::new(FlowKindCounters::Udp(if sends {
                UdpCounters {
                    datagrams_sent: DATAGRAMS_PER_S * k,
                    calls: 16 * k,
                    messages: DATAGRAMS_PER_S * k,
                    ..UdpCounters::default()
                }
            } else {
                UdpCounters {
                    datagrams: 990 * k,
                    lost: 11 * k,
                    duplicates: k,
                    reordered: 2 * k,
                    reorder_max: 3,
                    jitter_ns: 15_000 + 1000 * k,
                    calls: 20 * k,
                    messages: 990 * k,
                    transit_sum_ns: 50_000 * 990 * k as i64,
                    transits: 990 * k,
                    ..UdpCounters::default()
                }
            })));
            if !sends {
                snap.kind = Some(HostKindCounters::Udp(UdpHostCounters {
                    in_errors: 5 * k,
                    rcvbuf_errors: 5 * k,
                    sndbuf_errors: 0,
                }));
            }
        }
    }
    run
}

/// The fake run (one flow) as a file put: 256 KiB disk I/O, checksums that match, the
/// receiver's disk the slower stage.
pub fn file() -> RunData {
    let mut run = super::run_data(1, false);
    run.plan.kind = KindPlan::File(FileOptions {
        path: "fake/copy.bin".into(),
        local: None,
        size: Some(385_000_000),
        io: 256 * 1024,
        send: SendMode::Copy,
        direct: false,
        fsync: true,
        force: false,
        verify: Verify::Xxh3,
        drop_cache: false,
    });
    let last = run
        .ends
        .first()
        .map_or(0, |e| e.snaps.len().saturating_sub(1));
    for end in &mut run.ends {
        let sends = end.role == Role::Client;
        for (k, snap) in end.snaps.iter_mut().enumerate() {
            let f = &mut snap.flows[0];
            let ms = snap.t_ns as u64 / 1_000_000;
            f.kind = Some(Box::new(FlowKindCounters::File(if sends {
                FileCounters {
                    disk_bytes: f.sent,
                    disk_ns: ms * 200_000,
                    net_ns: ms * 700_000,
                    cached_bytes: Some(96_250_000),
                    ..FileCounters::default()
                }
            } else {
                FileCounters {
                    disk_bytes: f.received,
                    disk_ns: ms * 600_000,
                    net_ns: ms * 350_000,
                    sync_ns: if k == last { 25_000_000 } else { 0 },
                    verified: (k == last).then_some(true),
                    ..FileCounters::default()
                }
            })));
        }
    }
    run
}

/// `run` over TLS 1.3 with 16 KiB records: each wire byte count 2% over the application's, one
/// handshake per flow.
pub fn tls(mut run: RunData) -> RunData {
    run.plan.tls = Some(TlsOptions::default());
    let flows = run.plan.flows.len() as u64;
    for end in &mut run.ends {
        let client = end.role == Role::Client;
        end.info.tls = Some(TlsInfo {
            version: "1.3".into(),
            suite: "TLS13_AES_256_GCM_SHA384".into(),
            record: 16_384,
            handshake_ns: if client {
                (0..flows).map(|i| 900_000 + 100_000 * i).collect()
            } else {
                Vec::new()
            },
        });
        for snap in &mut end.snaps {
            for f in &mut snap.flows {
                if let Some(t) = f.tcp.as_mut() {
                    t.bytes_received = f.received + f.received / 50;
                }
            }
        }
    }
    run
}
