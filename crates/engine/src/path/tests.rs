//! What an end chooses for its path, on loopback connections and addresses of this host.

use super::*;
use fathom_proto::plan::{Direction, FlowPlan, KindPlan, RrOptions};
use std::net::{TcpListener, TcpStream};

/// One loopback connection's accepted end, as the engine gets it.
fn loopback() -> (TcpStream, Sockets) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let flow = FlowPlan {
        id: 0,
        dir: Direction::Forward,
    };
    (
        ours,
        Sockets::Tcp(vec![(flow, l.accept().unwrap().0.into())]),
    )
}

/// What [`choose`] decides for `plan` on a loopback connection.
fn on_loopback(plan: &TestPlan) -> PathDefaults {
    let (_peer, socks) = loopback();
    choose(plan, Side::Server, &socks).unwrap()
}

fn sndbuf(s: &Sockets) -> usize {
    let Sockets::Tcp(v) = s else { unreachable!() };
    v[0].1.send_buffer_size().unwrap()
}

#[test]
fn a_loopback_stream_gets_small_send_buffers_and_paired_workers() {
    let (_peer, socks) = loopback();
    let plan = TestPlan::default();
    let d = choose(&plan, Side::Server, &socks).unwrap();
    assert_eq!(d.sndbuf, Some(LOOPBACK_SNDBUF));
    assert_eq!(
        sndbuf(&socks),
        2 * LOOPBACK_SNDBUF as usize,
        "Linux doubles the request"
    );
    assert!(
        d.notes[0].starts_with("loopback path: send buffers 64K"),
        "{:?}",
        d.notes
    );
    let cpus = clock::usable_cpus();
    assert_eq!(d.pins.is_some(), cpus.len() > 1);
    assert_eq!(d.notes.len(), 1 + usize::from(cpus.len() > 1));
}

#[test]
fn what_the_plan_sets_is_left_alone() {
    let mut plan = TestPlan::default();
    plan.socket.sndbuf = Some(256 << 10);
    plan.server.threads = Some(1);
    let d = on_loopback(&plan);
    assert_eq!((d.sndbuf, d.pins, d.notes.len()), (None, None, 0));
}

#[test]
fn a_loopback_request_response_gets_each_end_cpus_of_its_own_and_autotuned_buffers() {
    let cpus = clock::usable_cpus();
    for kind in [KindPlan::Rr, KindPlan::Crr, KindPlan::UdpRr] {
        let plan = TestPlan {
            kind: kind(RrOptions::default()),
            ..TestPlan::default()
        };
        let (client, server) = (
            apart(&plan, Side::Client, &cpus),
            apart(&plan, Side::Server, &cpus),
        );
        if cpus.len() < 2 {
            assert_eq!((client, server), (None, None));
            continue;
        }
        let (client, server) = (client.unwrap(), server.unwrap());
        assert!(!client.is_empty() && !server.is_empty(), "{cpus:?}");
        assert!(
            client.iter().all(|c| !server.contains(c)),
            "{client:?} {server:?}"
        );
        assert_eq!(client.len() + server.len(), cpus.len());
    }
    let d = on_loopback(&TestPlan {
        kind: KindPlan::Rr(RrOptions::default()),
        ..TestPlan::default()
    });
    assert_eq!(d.sndbuf, None);
    if cpus.len() > 1 {
        let mine = d.pins.unwrap();
        assert_eq!(
            mine,
            cpus[cpus.len() / 2..],
            "the server end takes the upper half"
        );
        assert_eq!((d.workers, d.worker_per_flow), (Some(mine.len()), false));
        assert!(
            d.notes[0].contains("each end on CPUs of its own"),
            "{:?}",
            d.notes
        );
    }
}

#[test]
fn two_hosts_placement_gives_way_to_any_placement_flag() {
    let cpus = [0, 1, 2, 3];
    let mut plan = TestPlan {
        kind: KindPlan::Rr(RrOptions::default()),
        ..TestPlan::default()
    };
    assert_eq!(apart(&plan, Side::Client, &cpus), Some(vec![0, 1]));
    assert_eq!(apart(&plan, Side::Server, &cpus), Some(vec![2, 3]));
    assert_eq!(apart(&plan, Side::Server, &[0]), None, "one CPU");
    plan.server.threads = Some(1);
    assert_eq!(apart(&plan, Side::Client, &cpus), None);
    plan.server.threads = None;
    plan.client.affinity = Some(vec![0]);
    assert_eq!(apart(&plan, Side::Server, &cpus), None);
    let stream = TestPlan::default();
    assert_eq!(
        apart(&stream, Side::Client, &cpus),
        None,
        "a stream pairs its ends"
    );
}

#[test]
fn a_real_paths_stream_reads_at_least_64k_unless_the_plan_says() {
    let mut plan = TestPlan::default();
    let read = real_path_read(Loopback::ReceiverOnSenderCpu, &plan).unwrap();
    assert!(read >= REAL_PATH_READ, "{read}");
    assert_eq!(real_path_read(Loopback::EndsApart, &plan), None);
    plan.read_size = 16 << 10;
    assert_eq!(real_path_read(Loopback::ReceiverOnSenderCpu, &plan), None);
}

#[test]
fn a_real_paths_few_streams_get_a_worker_each() {
    let w = |l, n| per_flow_workers(l, n, 2);
    assert_eq!(w(Loopback::ReceiverOnSenderCpu, 4), Some(4));
    assert_eq!(w(Loopback::ReceiverOnSenderCpu, PER_FLOW_WORKERS + 1), None);
    assert_eq!(
        w(Loopback::ReceiverOnSenderCpu, 2),
        None,
        "a CPU each already"
    );
    assert_eq!(w(Loopback::ReceiverOnSenderCpu, 1), None);
    assert_eq!(w(Loopback::EndsApart, 4), None);
    let d = on_loopback(&TestPlan::default());
    assert_eq!(d.workers, None, "loopback keeps a worker per CPU");
}

/// A profile plan whose one transaction runs `op`.
fn profile(op: fathom_proto::profile::Op) -> TestPlan {
    use fathom_proto::profile::{FlowOp, Program, Repeat, Transaction};
    let ops = vec![FlowOp {
        op,
        count: 1,
        can_fail: false,
    }];
    TestPlan {
        kind: KindPlan::Profile(Program {
            transactions: vec![Transaction {
                repeat: Repeat::Iterations(1),
                rate: None,
                barrier: false,
                ops,
            }],
            seed: 1,
        }),
        ..TestPlan::default()
    }
}

/// The send buffer of a connection accepted on `listener`.
fn accepted_sndbuf(listener: &socket2::Socket) -> usize {
    let to = listener.local_addr().unwrap().as_socket().unwrap();
    let _ours = TcpStream::connect(to).unwrap();
    listener.accept().unwrap().0.send_buffer_size().unwrap()
}

#[test]
fn a_loopback_profile_gets_ends_apart_and_small_send_buffers_at_both_ends() {
    use fathom_proto::profile::{Op, Size};
    let plan = profile(Op::Write(Size::Fixed(1 << 20)));
    let listener = socket2::Socket::from(TcpListener::bind("127.0.0.1:0").unwrap());
    let to = listener.local_addr().unwrap().as_socket().unwrap();
    let multi = clock::usable_cpus().len() > 1;
    let d = choose(&plan, Side::Client, &Sockets::Connect(to, [0; 16])).unwrap();
    assert_eq!((d.sndbuf, d.pins.is_some()), (Some(LOOPBACK_SNDBUF), multi));
    let client_pins = d.pins.unwrap_or_default();
    assert!(
        d.notes[0].contains("(a group's window overrides)"),
        "{:?}",
        d.notes
    );
    let socks = Sockets::Listen(listener, [0; 16]);
    let d = choose(&plan, Side::Server, &socks).unwrap();
    assert_eq!((d.sndbuf, d.pins.is_some()), (Some(LOOPBACK_SNDBUF), multi));
    let server_pins = d.pins.unwrap_or_default();
    assert!(
        client_pins.iter().all(|c| !server_pins.contains(c)),
        "each end on CPUs of its own: {client_pins:?} {server_pins:?}"
    );
    let Sockets::Listen(listener, _) = &socks else {
        unreachable!()
    };
    assert_eq!(
        accepted_sndbuf(listener),
        2 * LOOPBACK_SNDBUF as usize,
        "a connection takes its listener's buffer, doubled"
    );
    let away = Sockets::Connect("192.0.2.1:5301".parse().unwrap(), [0; 16]);
    let d = choose(&plan, Side::Client, &away).unwrap();
    assert_eq!((d.sndbuf, d.pins), (None, None));
}

#[test]
fn a_profile_groups_window_wins_and_a_udp_group_keeps_its_buffers() {
    use fathom_proto::profile::{Op, Size};
    let mut plan = profile(Op::Write(Size::Fixed(1 << 20)));
    plan.socket.sndbuf = Some(256 << 10);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let l = socket2::Socket::from(listener);
    l.set_send_buffer_size(256 << 10).unwrap();
    let to = l.local_addr().unwrap().as_socket().unwrap();
    let d = choose(&plan, Side::Client, &Sockets::Connect(to, [0; 16])).unwrap();
    assert_eq!(d.sndbuf, None);
    let socks = Sockets::Listen(l, [0; 16]);
    assert_eq!(choose(&plan, Side::Server, &socks).unwrap().sndbuf, None);
    let Sockets::Listen(l, _) = &socks else {
        unreachable!()
    };
    assert_eq!(accepted_sndbuf(l), 2 * (256 << 10), "the window stays");
    let udp = profile(Op::SendTo(Size::Fixed(64)));
    let d = choose(&udp, Side::Client, &Sockets::Connect(to, [0; 16])).unwrap();
    assert_eq!(d.sndbuf, None);
    assert!(
        d.notes.iter().all(|n| !n.contains("send buffers")),
        "{:?}",
        d.notes
    );
}

#[test]
fn what_each_kind_gets_on_loopback() {
    use fathom_proto::plan::KindId::*;
    let on = |id| Kind::of(id).unwrap().loopback();
    assert_eq!(on(Stream), Loopback::ReceiverOnSenderCpu);
    for id in [Rr, Crr, UdpRr, Profile] {
        assert_eq!(on(id), Loopback::EndsApart, "{id:?}");
    }
    for id in [Udp, File] {
        assert_eq!(on(id), Loopback::Untouched, "{id:?}");
    }
}
