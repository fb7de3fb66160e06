//! Writes the seed inputs of the fuzz targets (one file per seed): for `control`, whole
//! conversations a real controller could have with an unkeyed agent, for every test kind, so
//! that fuzzing starts from inputs that reach the session's state machine; for `plan`, each
//! kind's plan; for `file`, copies whole and hostile (`fathom::agent::fuzz::file_seeds`).
//!
//! `cargo run --example seeds -- corpus` (in fuzz/) writes corpus/control, corpus/plan and
//! corpus/file.

use fathom_proto::plan::{Direction, FlowPlan, KindPlan, Limit, RrOptions, TestPlan};
use fathom_proto::profile::{FlowOp, Op, Program, Repeat, Size, Transaction};
use fathom_proto::udp::UdpOptions;
use fathom_proto::class::Class;
use fathom_proto::{BookSlot, Connection, JoinPlan, Preamble, PreambleKind, ToAgent};
use std::io::Cursor;
use std::net::{IpAddr, Ipv4Addr};

fn main() {
    let root = std::env::args().nth(1).expect("usage: seeds CORPUS_DIR");
    let dir = format!("{root}/control");
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    for (name, messages) in conversations() {
        let keyed = messages
            .iter()
            .any(|m| matches!(m, ToAgent::Auth { mac: Some(_) }));
        let mut bytes = vec![u8::from(keyed)];
        bytes.extend_from_slice(&Preamble::ours(PreambleKind::Control).encode());
        let mut stream = Cursor::new(bytes);
        stream.set_position(stream.get_ref().len() as u64);
        let mut conn = Connection::new(stream);
        for m in &messages {
            conn.send(m).expect("a seed message encodes");
        }
        let path = format!("{dir}/seed-{name}");
        std::fs::write(&path, conn.get_ref().get_ref()).expect("write a seed");
    }
    let dir = format!("{root}/plan");
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    for kind in kinds() {
        let name = kind.name();
        let mut framed = Cursor::new(Vec::new());
        Connection::new(&mut framed)
            .send(&plan(kind, 2))
            .expect("a plan encodes");
        let body = &framed.get_ref()[4..];
        std::fs::write(format!("{dir}/seed-{name}"), body).expect("write a seed");
    }
    let dir = format!("{root}/file");
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    for (name, bytes) in fathom::agent::fuzz::file_seeds() {
        std::fs::write(format!("{dir}/seed-{name}"), bytes).expect("write a seed");
    }
}

/// Every test kind but the file copy (its own target has its seeds), each with seeds of its
/// own: its options small, so that a seed runs in moments.
fn kinds() -> [KindPlan; 6] {
    let rr = RrOptions {
        request: 1,
        response: 1,
        burst: 1,
        rate: None,
        udp_timeout_ns: 100_000_000,
        test_drop_every: None,
    };
    [
        KindPlan::Stream,
        KindPlan::Rr(rr.clone()),
        KindPlan::Crr(rr.clone()),
        KindPlan::UdpRr(rr),
        KindPlan::Udp(UdpOptions {
            size: 64,
            batch: 1,
            rate_bps: None,
            pps: Some(1000.0),
            blast: false,
            faults: None,
            gso: false,
        }),
        KindPlan::Profile(Program {
            transactions: vec![Transaction {
                repeat: Repeat::Iterations(2),
                rate: None,
                barrier: false,
                ops: vec![
                    FlowOp {
                        op: Op::Write(Size::Rand { lo: 1, hi: 64 }),
                        count: 1,
                        can_fail: false,
                    },
                    FlowOp {
                        op: Op::Read(Size::Fixed(1)),
                        count: 1,
                        can_fail: false,
                    },
                ],
            }],
            seed: 1,
        }),
    ]
}

fn plan(kind: KindPlan, flows: u32) -> TestPlan {
    TestPlan {
        kind,
        flows: (0..flows)
            .map(|id| FlowPlan {
                id,
                dir: if id % 2 == 0 {
                    Direction::Forward
                } else {
                    Direction::Reverse
                },
            })
            .collect(),
        limit: Limit::Time {
            duration_ns: 20_000_000,
        },
        interval_ns: 10_000_000,
        write_size: 1024,
        ..TestPlan::default()
    }
}

fn conversations() -> Vec<(String, Vec<ToAgent>)> {
    let auth = ToAgent::Auth { mac: None };
    let mut all = vec![
        ("auth".to_string(), vec![auth.clone()]),
        (
            "keyed-auth".to_string(),
            vec![ToAgent::Auth { mac: Some([7; 32]) }],
        ),
        (
            "settings".to_string(),
            vec![auth.clone(), ToAgent::Settings, ToAgent::Close],
        ),
        (
            "mesh".to_string(),
            vec![
                auth.clone(),
                ToAgent::Book(BookSlot {
                    class: Class::Exclusive,
                    start_in_ns: 1_000_000,
                    hold_ns: 1_000_000_000,
                    holder: "seed".into(),
                }),
                ToAgent::Release { id: 1 },
                ToAgent::MeshResults,
                ToAgent::Close,
            ],
        ),
    ];
    for kind in kinds() {
        let name = kind.name();
        let p = plan(kind, 2);
        all.push((
            format!("{name}-setup"),
            vec![
                auth.clone(),
                ToAgent::TimeProbe { t1: 1 },
                ToAgent::Setup(Box::new(p.clone())),
                ToAgent::Heartbeat,
                ToAgent::Finish,
                ToAgent::Close,
            ],
        ));
        all.push((
            format!("{name}-join-abort"),
            vec![
                auth.clone(),
                ToAgent::Join(Box::new(JoinPlan {
                    plan: p,
                    flows: vec![0, 1],
                    server: IpAddr::V4(Ipv4Addr::LOCALHOST),
                    port: 5301,
                    udp_ports: vec![5302, 5303],
                    cookie: [1; 16],
                    cert: None,
                })),
                ToAgent::Abort {
                    reason: "seed".into(),
                },
            ],
        ));
    }
    // Start before every flow arrived (none does here) is refused; a crr Setup prepares at
    // once, so Start would run it, and any fixed t0 is far in the past or the future of the
    // agent's clock: the fuzzer finds those itself.
    all.push((
        "stream-setup-start".to_string(),
        vec![
            auth,
            ToAgent::Setup(Box::new(plan(KindPlan::Stream, 1))),
            ToAgent::Start { t0: 1 },
        ],
    ));
    all
}
