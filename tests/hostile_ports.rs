//! The agent under attack, round two (issue 21, items 6-8 and 10): strangers on a test's data
//! ports are neither answered nor counted nor able to delay the test, a TLS handshake cannot hold
//! a session, and a controller that never reads is cut off as silent. Each case is a real agent
//! and strangers made by the test; timings are bounded generously.

mod common;
use common::*;
use fathom::agent::AgentConfig;
use fathom_proto::plan::{KindPlan, Limit, RrOptions, TestPlan};
use fathom_proto::sample::Mark;
use fathom_proto::tls::TlsOptions;
use fathom_proto::{Connection, DataHello, FrameError, ToAgent, ToController, MAX_FRAME};
use std::io::{Cursor, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Sets `plan` up on an agent in this process: the control connection, the data address and
/// the cookie.
fn ready(plan: &TestPlan) -> (Connection<TcpStream>, SocketAddr, [u8; 16]) {
    let addr = in_process(AgentConfig::default());
    match setup(addr, plan) {
        (ToController::Ready { port, cookie, .. }, c) => {
            (c, SocketAddr::new(addr.ip(), port), cookie)
        }
        (other, _) => panic!("not admitted: {other:?}"),
    }
}

/// A data connection that has sent its hello for `flow`.
fn flow(data: SocketAddr, cookie: [u8; 16], flow: u32) -> TcpStream {
    let mut s = TcpStream::connect(data).unwrap();
    s.write_all(&DataHello { cookie, flow }.encode()).unwrap();
    s
}

/// Item 7: silent strangers, and one with a wrong cookie, on a stream test's data port neither
/// delay its flows nor take their places.
#[test]
fn strangers_do_not_delay_the_arrival_of_data_connections() {
    let (mut c, data, cookie) = ready(&stream(2));
    let silent: Vec<TcpStream> = (0..7).map(|_| TcpStream::connect(data).unwrap()).collect();
    let wrong = flow(data, [7; 16], 0);
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let _flows = [flow(data, cookie, 0), flow(data, cookie, 1)];
    match c.expect(MAX_FRAME).unwrap() {
        ToController::Connected(infos) => assert_eq!(infos.len(), 2),
        other => panic!("{other:?}"),
    }
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "{} silent strangers delayed the arrival by {:?}",
        silent.len(),
        t.elapsed()
    );
    drop(wrong);
}

/// A TLS test's flow 0 that sends its hello, then a ClientHello a byte every 500 ms.
fn dribbling_tls_flow() -> (Connection<TcpStream>, std::thread::JoinHandle<()>) {
    let mut plan = stream(1);
    plan.tls = Some(TlsOptions::default());
    let (c, data, cookie) = ready(&plan);
    let mut s = flow(data, cookie, 0);
    let dribbler = std::thread::spawn(move || {
        let start = Instant::now();
        let hello = [
            0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
        ];
        for b in hello.iter().cycle() {
            if start.elapsed() > Duration::from_secs(15) || s.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    (c, dribbler)
}

/// Item 8: a dribbled ClientHello does not keep the session from hearing Close.
#[test]
fn a_dribbled_tls_handshake_does_not_hold_the_session() {
    let (mut c, dribbler) = dribbling_tls_flow();
    std::thread::sleep(Duration::from_secs(1));
    c.send(&ToAgent::Close).unwrap();
    let t = Instant::now();
    c.get_ref()
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let end = c.recv::<ToController>(MAX_FRAME);
    assert!(
        matches!(end, Ok(None)) && t.elapsed() < Duration::from_secs(3),
        "Close was not heard at once: {end:?} after {:?}",
        t.elapsed()
    );
    dribbler.join().unwrap();
}

/// Item 8: a dribbled ClientHello is cut off at the handshake's deadline (10 s), however often
/// it sends, and the test fails saying so.
#[test]
fn a_dribbled_tls_handshake_ends_at_its_deadline() {
    let (mut c, dribbler) = dribbling_tls_flow();
    let t = Instant::now();
    c.get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let message = loop {
        assert!(t.elapsed() < Duration::from_secs(14), "not cut off at 10 s");
        match c.recv::<ToController>(MAX_FRAME) {
            Ok(Some(ToController::Error { message })) => break message,
            Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("{other:?}"),
        }
        c.send(&ToAgent::Heartbeat).unwrap();
    };
    assert!(
        message.contains("did not complete within 10 s"),
        "{message}"
    );
    dribbler.join().unwrap();
}

/// Item 10: a controller that sends TimeProbes without end and never reads a reply is cut off
/// (its writes blocked for the silence time), its queue stays bounded, and its slot is freed.
#[test]
fn a_controller_that_never_reads_is_cut_off_as_silent() {
    let mut agent = Agent::start(&["--max-tests", "1"]);
    let idle_rss = agent.rss_kb();
    let c = welcomed(agent.addr);
    let mut sock = c.get_ref().try_clone().unwrap();
    // Small, so that the agent's replies back up at once (loopback autotunes to 32 MB here).
    socket2::SockRef::from(&sock)
        .set_recv_buffer_size(64 << 10)
        .unwrap();
    sock.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut probes = Connection::new(Cursor::new(Vec::new()));
    for t1 in 0..20_000 {
        probes.send(&ToAgent::TimeProbe { t1 }).unwrap();
    }
    let batch = probes.get_ref().get_ref().clone();
    let (start, mut peak) = (Instant::now(), idle_rss);
    // At most about 2 MB/s, so that an agent that queues without bound stays small enough.
    let cut = loop {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "a controller that never reads was not cut off (agent at {peak} KiB, idle {idle_rss})"
        );
        match sock.write_all(&batch) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break start.elapsed(),
        }
        peak = peak.max(agent.rss_kb());
        std::thread::sleep(Duration::from_millis(100));
    };
    // The agent's send buffer (up to 4 MB) fills first, then its writes wait 3 s.
    assert!(cut < Duration::from_secs(25), "cut off after {cut:?}");
    assert!(
        peak < idle_rss + (64 << 10),
        "the agent grew from {idle_rss} to {peak} KiB"
    );
    let line = agent.next_log_line();
    assert!(line.contains("read nothing for 3 s"), "{line}");
    let out = run(&["stream", &agent.target(), "-n", "1M", "--json"], 60);
    assert!(
        out.status.success(),
        "the slot was not freed: {}",
        stderr(&out)
    );
}

fn crr(seconds: u64) -> TestPlan {
    TestPlan {
        kind: KindPlan::Crr(RrOptions::default()),
        limit: Limit::Time {
            duration_ns: seconds * 1_000_000_000,
        },
        ..stream(1)
    }
}

/// Item 6: on crr's data port a stranger's requests are neither answered nor counted, and idle
/// strangers cannot hold more than the test's flows plus a small spare of descriptors.
#[test]
fn crr_strangers_are_neither_answered_nor_counted_nor_held() {
    crr_strangers(crr(6));
}

/// Item 6 with `--tls`: a stranger gets no TLS session (not even an alert), so it costs no
/// session memory.
#[test]
fn crr_tls_strangers_get_no_session() {
    let mut plan = crr(6);
    plan.tls = Some(TlsOptions::default());
    crr_strangers(plan);
}

/// `plan` must last long enough (6 s) that its data port is still open for the 400 idle strangers
/// after the answered one's 1 s wait, even on a loaded machine.
fn crr_strangers(plan: TestPlan) {
    let agent = Agent::start(&[]);
    let idle_fds = agent.fds();
    let (reply, mut c) = setup(agent.addr, &plan);
    let ToController::Ready { port, .. } = reply else {
        panic!("not admitted: {reply:?}");
    };
    let data = SocketAddr::new(agent.addr.ip(), port);
    assert!(matches!(
        c.expect(MAX_FRAME).unwrap(),
        ToController::Connected(_)
    ));
    c.send(&ToAgent::Start {
        t0: fathom_engine::clock::now_ns() + 100_000_000,
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut asker = TcpStream::connect(data).unwrap();
    asker.write_all(&[1; 64]).unwrap();
    asker
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = asker.read_to_end(&mut answer);
    c.send(&ToAgent::Heartbeat).unwrap();
    assert!(
        answer.is_empty(),
        "a stranger got {} bytes of answers",
        answer.len()
    );
    let idle: Vec<TcpStream> = (0..400)
        .map(|_| TcpStream::connect(data).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    c.send(&ToAgent::Heartbeat).unwrap();
    let held = agent.fds() - idle_fds;
    assert!(
        held < 200,
        "{} idle strangers hold {held} of the agent's descriptors",
        idle.len()
    );
    let counted = loop {
        match c.expect(MAX_FRAME).unwrap() {
            ToController::Snapshot(s) if s.mark == Mark::Final => break s.flows[0].transactions,
            ToController::Error { message } => panic!("{message}"),
            _ => c.send(&ToAgent::Heartbeat).unwrap(),
        }
    };
    assert_eq!(
        counted, 0,
        "strangers' transactions were counted as the test's"
    );
}
