//! The runner on a real connection: a read the other end's close cut short, with and
//! without `can_fail`.

use super::*;
use fathom_proto::profile::{FlowOp, Op, Program, Repeat, Size, Transaction};
use std::io::Write as _;

/// The connecting end's runner of two iterations of a 10-byte read (`can_fail` as said),
/// on a connection whose other end sends 4 bytes and closes: the step's event, the counts,
/// and after a counted failure the next step's event.
fn read_from_a_peer_that_closed(can_fail: bool) -> (Event, ProfileCounters, Option<Event>) {
    let program = Arc::new(Program {
        transactions: vec![Transaction {
            repeat: Repeat::Iterations(2),
            rate: None,
            barrier: false,
            ops: vec![FlowOp {
                op: Op::Read(Size::Fixed(10)),
                count: 1,
                can_fail,
            }],
        }],
        seed: 1,
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut theirs, _) = listener.accept().unwrap();
    theirs.write_all(&[1; 4]).unwrap();
    drop(theirs);
    ours.set_nonblocking(true).unwrap();
    let mut wire = Wire::clear(mio::net::TcpStream::from_std(ours));
    let stats = Arc::new(FlowStats::default());
    let mut runner = Runner::new(Cursor::new(program, 0, false), stats, true, false);
    let poll = mio::Poll::new().unwrap();
    let latency = Latency::default();
    let (wbuf, mut rbuf, mut spawned) = (vec![0; 64], vec![0; 64], Vec::new());
    let mut io = Io {
        wbuf: &wbuf,
        rbuf: &mut rbuf,
        zc_file: None,
        end_ns: u64::MAX,
        ramp_until: 0,
        wait_until: 0,
        registry: poll.registry(),
        token: mio::Token(0),
        latency: &latency,
        spawned: &mut spawned,
    };
    runner.step(None, &mut io).unwrap();
    runner.connected(-1, -1, &latency);
    // The peer's 4 bytes and its close are on our socket by now (loopback).
    let event = runner
        .step(Some(Carrier::Stream(&mut wire)), &mut io)
        .unwrap();
    let then = match event {
        Event::Broken => Some(runner.step(None, &mut io).unwrap()),
        _ => None,
    };
    (event, runner.ops, then)
}

#[test]
fn a_read_that_may_fail_counts_its_failure_and_the_program_goes_on() {
    let (event, ops, then) = read_from_a_peer_that_closed(true);
    assert_eq!(event, Event::Broken);
    assert_eq!(
        (ops.ops[0].count, ops.ops[0].failed, ops.ops[0].bytes),
        (0, 1, 4)
    );
    assert_eq!(
        then,
        Some(Event::Connect),
        "the next iteration opens a new connection"
    );
    let (event, ops, _) = read_from_a_peer_that_closed(false);
    assert_eq!(event, Event::PeerEnded, "without can_fail the flow fails");
    assert_eq!(ops.ops[0].failed, 0);
}
