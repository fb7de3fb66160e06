//! Properties of plans shaped as the command line makes them, some spoiled by a peer's values
//! (sizes of 0, CPU 1024, a burst of 4294967295, ids out of order...): a plan `validate()`
//! accepts runs to completion on loopback with the in-process agent, or fails with a clear
//! error, never a hang or a panic; a plan it rejects is refused by the agent naming the field.
//! Plans are short (a few ms, a few KB or transactions, up to three flows) so that the whole
//! property stays well under a minute.

use fathom::agent::{Agent, AgentConfig};
use fathom::controller::{self, RunOptions, Target, Topology};
use fathom_proto::plan::{
    Direction, FlowPlan, KindId, KindPlan, Limit, RrOptions, SideOptions, SocketOptions, TestPlan,
};
use fathom_proto::udp::UdpOptions;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

/// Longest a short plan may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(20);

fn kind() -> impl Strategy<Value = KindId> {
    prop_oneof![
        Just(KindId::Stream),
        Just(KindId::Rr),
        Just(KindId::Crr),
        Just(KindId::UdpRr),
        Just(KindId::Udp)
    ]
}

/// -P 1..3, forward, -R, or (stream) both ways.
fn flows(kind: KindId) -> impl Strategy<Value = Vec<FlowPlan>> {
    let dirs = match kind {
        KindId::Stream => 0..3u8,
        KindId::Crr => 0..1,
        _ => 0..2,
    };
    (1..=3u32, dirs).prop_map(|(n, d)| {
        let dir = |i: u32| match (d, i % 2) {
            (0, _) | (2, 0) => Direction::Forward,
            _ => Direction::Reverse,
        };
        let per_dir = if d == 2 { 2 } else { 1 };
        (0..n * per_dir)
            .map(|id| FlowPlan { id, dir: dir(id) })
            .collect()
    })
}

/// -t of 20..60 ms (with an optional 10 ms --omit), or -n.
fn limit(kind: KindId) -> impl Strategy<Value = (Limit, u64)> {
    let counted = match kind {
        KindId::Stream => (1..200_000u64).prop_map(Limit::Bytes).boxed(),
        KindId::Udp => (1..500u64).prop_map(Limit::Datagrams).boxed(),
        _ => (1..300u64).prop_map(Limit::Transactions).boxed(),
    };
    prop_oneof![
        (20..60u64, prop::bool::ANY).prop_map(|(ms, omit)| (
            Limit::Time {
                duration_ns: ms * 1_000_000
            },
            if omit { 10_000_000 } else { 0 }
        )),
        counted.prop_map(|l| (l, 0)),
    ]
}

fn rr(kind: KindId) -> impl Strategy<Value = Option<RrOptions>> {
    let max: u32 = if kind == KindId::UdpRr { 1472 } else { 4096 };
    let rate = prop::option::of(1_000.0..20_000.0f64);
    (1..=max, 1..=max, 1..=4u32, rate).prop_map(move |(request, response, burst, rate)| {
        (kind != KindId::Stream).then_some(RrOptions {
            request,
            response,
            burst,
            rate,
            udp_timeout_ns: 0,
            test_drop_every: None,
        })
    })
}

/// `fathom udp`: --size, --batch, paced by --pps so that a short test stays short.
fn udp(kind: KindId) -> impl Strategy<Value = Option<UdpOptions>> {
    (16..=1400u32, 1..=8u32, 2_000.0..20_000.0f64).prop_map(move |(size, batch, pps)| {
        (kind == KindId::Udp).then_some(UdpOptions {
            size,
            batch,
            rate_bps: None,
            pps: Some(pps),
            blast: false,
            faults: None,
            gso: false,
        })
    })
}

fn socket() -> impl Strategy<Value = SocketOptions> {
    let buf = prop::option::of(4096..262_144u32);
    (buf.clone(), buf, prop::bool::ANY, prop::bool::ANY).prop_map(
        |(sndbuf, rcvbuf, nodelay, quickack)| SocketOptions {
            sndbuf,
            rcvbuf,
            nodelay,
            quickack,
            ..SocketOptions::default()
        },
    )
}

/// --threads, --affinity and --cpus within this machine's CPUs.
fn side() -> impl Strategy<Value = SideOptions> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let list = prop::collection::vec(0..cpus, 1..=2);
    (
        prop::option::of(1..=2u32),
        prop::option::of(list),
        prop::option::of(1..=cpus),
    )
        .prop_map(|(threads, affinity, n)| SideOptions {
            threads,
            cpu_set: affinity
                .is_none()
                .then_some(n)
                .flatten()
                .map(|n| (0..n).collect()),
            affinity,
        })
}

/// Out-of-bounds values a hostile or buggy peer could send, one field each.
const SPOILERS: &[fn(&mut TestPlan)] = &[
    |p| p.write_size = 0,
    |p| p.write_size = u32::MAX,
    |p| p.interval_ns = 1_000_000,
    |p| p.interval_ns = u64::MAX,
    |p| p.omit_ns = u64::MAX,
    |p| p.flows.reverse(),
    |p| p.flows.clear(),
    |p| p.server.affinity = Some(vec![1024]),
    |p| p.client.cpu_set = Some(vec![u32::MAX]),
    |p| p.server.threads = Some(0),
    |p| p.socket.sndbuf = Some(u32::MAX),
    |p| p.socket.cc = Some("a-name-far-too-long".into()),
    |p| p.limit = Limit::Datagrams(1),
    |p| {
        if let Some(rr) = p.kind.rr_mut() {
            rr.request = 0;
        }
    },
    |p| {
        if let Some(rr) = p.kind.rr_mut() {
            rr.response = 0;
        }
    },
    |p| {
        if let Some(rr) = p.kind.rr_mut() {
            rr.burst = u32::MAX;
        }
    },
    |p| {
        if let Some(rr) = p.kind.rr_mut() {
            rr.rate = Some(f64::NAN);
        }
    },
];

/// A command-line plan, spoiled in one field about half the time.
fn spoiled_plan() -> impl Strategy<Value = TestPlan> {
    let spoiler = prop::option::of(0..SPOILERS.len());
    (plan(), spoiler).prop_map(|(mut plan, spoiler)| {
        if let Some(i) = spoiler {
            SPOILERS[i](&mut plan);
        }
        plan
    })
}

fn plan() -> impl Strategy<Value = TestPlan> {
    kind().prop_flat_map(|kind| {
        let sizes = (1..=65_536u32, prop_oneof![Just(0u32), 1..=65_536u32]);
        (
            (flows(kind), limit(kind), 10..30u64, socket()),
            (sizes, prop::bool::ANY, rr(kind), udp(kind), side(), side()),
        )
            .prop_map(
                move |((flows, (limit, omit_ns), interval_ms, socket), rest)| {
                    let ((mut write_size, mut read_size), zerocopy, rr, udp, client, server) = rest;
                    if let Some(rr) = &rr {
                        // What `fathom rr` and `crr` set: buffers for the larger message.
                        write_size = rr.request.max(rr.response);
                        read_size = write_size.max(64 << 10);
                    }
                    if let Some(udp) = &udp {
                        // What `fathom udp` sets: a buffer for one batch.
                        write_size = udp.size * udp.batch;
                        read_size = write_size;
                    }
                    let options = rr
                        .and_then(|rr| KindPlan::request_response(kind, rr))
                        .or(udp.map(KindPlan::Udp));
                    TestPlan {
                        kind: options.unwrap_or_default(),
                        flows,
                        limit,
                        omit_ns,
                        interval_ns: interval_ms * 1_000_000,
                        socket,
                        write_size,
                        read_size,
                        zerocopy: zerocopy && kind == KindId::Stream,
                        tls: None,
                        client,
                        server,
                    }
                },
            )
    })
}

/// Runs `plan` against the agent at `addr` from this process; `Err` is the error it ended with.
fn run(addr: SocketAddr, plan: TestPlan) -> Result<(), String> {
    let topo = Topology {
        server: Target {
            addr,
            name: "loopback".into(),
            embedded: true,
            netns: None,
            key: None,
            group: None,
        },
        clients: Vec::new(),
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = controller::run(&topo, plan, &RunOptions::default(), &AtomicBool::new(false));
        let r = r.map_err(|e| e.to_string());
        drop(tx.send(r.and_then(|run| run.error.map_or(Ok(()), Err))));
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| Err(format!("HANG: no outcome in {} s", HANG.as_secs())))
}

#[test]
fn valid_plans_complete_or_fail_clearly_and_invalid_ones_are_refused_by_field() {
    let agent = Agent::bind("127.0.0.1:0".parse().unwrap(), AgentConfig::default()).unwrap();
    let addr = agent.local_addr().unwrap();
    agent.spawn().unwrap();
    let cfg = Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new(cfg)
        .run(&spoiled_plan(), |plan| {
            let verdict = plan.validate();
            let outcome = run(addr, plan.clone());
            match (verdict, outcome) {
                (Ok(()), Ok(())) => {}
                (Ok(()), Err(e)) => prop_assert!(
                    !e.is_empty() && !e.contains("HANG") && !e.contains("panicked"),
                    "{plan:?}: {e}"
                ),
                (Err(v), Err(e)) => prop_assert!(
                    e.contains(v.field) && !e.contains("HANG"),
                    "{plan:?}: validate says {v}, the run ended with: {e}"
                ),
                (Err(v), Ok(())) => prop_assert!(false, "{plan:?} ran though validate says {v}"),
            }
            Ok(())
        })
        .unwrap();
}
