//! D4/D5 of issue 10: a request/response plan with a 0-byte request or response (refused by
//! plan validation, but the engine must not rely on that) neither spins nor divides by zero.

use fathom_engine::{clock, Prepared, Side, Sockets};
use fathom_proto::plan::{Direction, FlowPlan, KindPlan, Limit, RrOptions, TestPlan};
use fathom_proto::sample::EndpointInfo;
use socket2::Socket;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

const FLOW: FlowPlan = FlowPlan {
    id: 0,
    dir: Direction::Forward,
};

/// A plan of the request/response kind `kind` makes of its options.
fn plan(
    kind: fn(RrOptions) -> KindPlan,
    request: u32,
    response: u32,
    limit: Limit,
) -> Arc<TestPlan> {
    Arc::new(TestPlan {
        kind: kind(RrOptions {
            request,
            response,
            burst: 1,
            rate: None,
            udp_timeout_ns: 0,
            test_drop_every: None,
        }),
        flows: vec![FLOW],
        limit,
        write_size: 1,
        read_size: 64 << 10,
        ..TestPlan::default()
    })
}

/// A connected pair: (this test's end, the engine's end).
fn pair() -> (TcpStream, Socket) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (theirs, _) = l.accept().unwrap();
    (ours, theirs.into())
}

/// Runs one endpoint to its end, or fails the test after 10 s (a spinning worker never ends).
fn run(plan: Arc<TestPlan>, side: Side, sockets: Sockets) -> EndpointInfo {
    let prepared = Prepared::new(plan, (side, None), vec![0], sockets, None).unwrap();
    let running = prepared
        .start(clock::now_ns() + 20_000_000, Box::new(|_| {}))
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(tx.send(running.join())));
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the endpoint never ended")
}

#[test]
fn an_asker_expecting_a_0_byte_response_does_not_spin() {
    let (mut peer, sock) = pair();
    let answer = std::thread::spawn(move || {
        let mut b = [0u8; 1];
        peer.read_exact(&mut b).unwrap();
        peer.write_all(&b).unwrap();
        peer
    });
    let p = plan(KindPlan::Rr, 1, 0, Limit::Transactions(1));
    let info = run(p, Side::Client, Sockets::Tcp(vec![(FLOW, sock)]));
    assert_eq!(info.error, None);
    drop(answer.join());
}

#[test]
fn an_answerer_of_0_byte_requests_does_not_divide_by_zero() {
    let (mut peer, sock) = pair();
    peer.write_all(&[7]).unwrap();
    peer.shutdown(std::net::Shutdown::Write).unwrap();
    let p = plan(KindPlan::Rr, 0, 1, Limit::Transactions(1));
    let info = run(p, Side::Server, Sockets::Tcp(vec![(FLOW, sock)]));
    assert_eq!(info.error, None);
}

#[test]
fn a_crr_server_of_0_byte_requests_does_not_divide_by_zero() {
    let listener = Socket::from(TcpListener::bind("127.0.0.1:0").unwrap());
    let addr = listener.local_addr().unwrap().as_socket().unwrap();
    let p = plan(
        KindPlan::Crr,
        0,
        1,
        Limit::Time {
            duration_ns: 500_000_000,
        },
    );
    let client = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let mut s = TcpStream::connect(addr).unwrap();
        let hello = fathom_proto::DataHello {
            cookie: [3; 16],
            flow: 0,
        };
        s.write_all(&hello.encode()).unwrap();
        s.write_all(&[7]).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = s.read(&mut [0u8; 1]);
    });
    let info = run(p, Side::Server, Sockets::Listen(listener, [3; 16]));
    assert_eq!(info.error, None);
    client.join().unwrap();
}
