//! What a hostile probe of the agent and the command line found (issue 10, section 5), each case
//! pinned: hostile plans are refused by field, strangers cannot hold the agent's slots, threads,
//! memory or CPU, and a readiness probe is not logged as a refusal.

mod common;
use common::*;
use fathom::agent::{AgentConfig, MAX_HANDSHAKES};
use fathom_proto::plan::{KindPlan, Limit, RrOptions, TestPlan};
use fathom_proto::{Preamble, PreambleKind, ToAgent, ToController, MAX_FRAME};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn refusal(reply: ToController) -> String {
    match reply {
        ToController::Error { message } => message,
        other => panic!("admitted: {other:?}"),
    }
}

fn rr(request: u32, response: u32, burst: u32) -> TestPlan {
    TestPlan {
        kind: KindPlan::Rr(RrOptions {
            request,
            response,
            burst,
            rate: None,
            udp_timeout_ns: 0,
            test_drop_every: None,
        }),
        limit: Limit::Time {
            duration_ns: 1_000_000_000,
        },
        ..stream(1)
    }
}

#[test]
fn hostile_plans_are_refused_naming_the_field() {
    let addr = in_process(AgentConfig::default());
    let mut d1 = stream(1);
    d1.server.affinity = Some(vec![1024]);
    let mut d3 = stream(1);
    d3.limit = Limit::Bytes(10 << 20);
    d3.interval_ns = 18_446_744_073_700_000_000;
    let mut overflow = stream(1);
    overflow.limit = Limit::Time {
        duration_ns: 18_446_744_073_000_000_000,
    };
    overflow.omit_ns = 5_000_000_000;
    let cases = [
        ("D1", d1, "server.affinity"),
        ("D2", rr(1, 1, u32::MAX), "rr.burst"),
        ("D3", d3, "interval"),
        ("D4", rr(1, 0, 1), "rr.response"),
        ("D5", rr(0, 1, 1), "rr.request"),
        ("-t 18446744073s --omit 5s", overflow, "limit.duration"),
    ];
    for (what, plan, needle) in cases {
        let message = refusal(setup(addr, &plan).0);
        assert!(message.contains(needle), "{what}: {message}");
        assert!(!message.contains(" 4 s"), "{what}: {message}");
    }
    let mut ok = welcomed(addr);
    ok.send(&ToAgent::Setup(Box::new(stream(1)))).unwrap();
    assert!(matches!(
        ok.expect(MAX_FRAME).unwrap(),
        ToController::Ready { .. }
    ));
}

/// D9: a memory budget per test and per agent, checked at admission.
#[test]
fn memory_is_budgeted_per_test_and_per_agent() {
    let addr = in_process(AgentConfig {
        max_memory: 100 << 20,
        ..AgentConfig::default()
    });
    let mut big = stream(8);
    big.server.threads = Some(8);
    big.write_size = 64 << 20;
    let message = refusal(setup(addr, &big).0);
    assert!(message.contains("--max-memory"), "{message}");

    let mut half = stream(2);
    half.server.threads = Some(2);
    half.write_size = 32 << 20;
    let (first, held) = setup(addr, &half);
    assert!(matches!(first, ToController::Ready { .. }), "{first:?}");
    let message = refusal(setup(addr, &half).0);
    assert!(message.contains("running on this agent hold"), "{message}");
    drop(held);
    let freed = Instant::now();
    loop {
        match setup(addr, &half).0 {
            ToController::Ready { .. } => break,
            other => assert!(
                freed.elapsed() < Duration::from_secs(5),
                "the first test's memory was never given back: {other:?}"
            ),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// D7: a 16 MiB length prefix before authentication is refused at once, not read.
#[test]
fn a_large_frame_before_authentication_is_refused_unread() {
    let addr = in_process(AgentConfig::default());
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    s.write_all(&Preamble::ours(PreambleKind::Control).encode())
        .unwrap();
    s.write_all(&[1, 0, 0, 0]).unwrap();
    let mut back = Vec::new();
    s.read_to_end(&mut back)
        .expect("the agent answers and closes at once, without waiting for 16 MiB");
    let text = String::from_utf8_lossy(&back);
    assert!(text.contains("1024-byte limit"), "{text}");
}

/// D6: the whole handshake has one deadline; a sender dribbling a byte a second is cut off.
#[test]
fn a_dribbling_handshake_is_cut_off_at_its_deadline() {
    let addr = in_process(AgentConfig::default());
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(900)))
        .unwrap();
    let opened = Instant::now();
    let mut bytes = Preamble::ours(PreambleKind::Control).encode().to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 200]);
    bytes.resize(200, 0);
    let mut buf = [0u8; 256];
    // Why the dribble stopped, when the agent ended it; a timeout or an interrupted read is not
    // an end (one CI run saw the loop stop at about 5 s without saying why).
    let ended = |r: std::io::Result<usize>| match r {
        Ok(0) => Some("the agent closed the connection".to_string()),
        Ok(_) => None,
        Err(e) => match e.kind() {
            std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted => None,
            _ => Some(format!("read failed: {e}")),
        },
    };
    let mut why = "every byte was sent".to_string();
    for (i, b) in bytes.into_iter().enumerate() {
        if let Err(e) = s.write_all(&[b]) {
            why = format!("writing byte {i} failed: {e}");
            break;
        }
        if let Some(end) = ended(s.read(&mut buf)) {
            why = format!("{end} after byte {i}");
            break;
        }
        assert!(
            opened.elapsed() < Duration::from_secs(13),
            "a dribbler held its handshake past the 10 s deadline"
        );
    }
    assert!(
        opened.elapsed() >= Duration::from_secs(9),
        "cut off after {:?}, before the 10 s deadline: {why}",
        opened.elapsed()
    );
}

/// D6 and the thread per pending handshake: idle strangers take no test slot, and their
/// handshakes are bounded, so neither threads nor slots run out.
#[test]
fn idle_connections_neither_block_tests_nor_take_a_thread_each() {
    let agent = Agent::start(&["--max-tests", "1"]);
    let idle_threads = agent.threads();
    let idle: Vec<TcpStream> = (0..MAX_HANDSHAKES + 100)
        .map(|_| TcpStream::connect(agent.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        agent.threads() <= idle_threads + MAX_HANDSHAKES + 2,
        "{} threads for {} idle connections",
        agent.threads(),
        idle.len()
    );
    run_ok(&["stream", &agent.target(), "-n", "1M", "--json"], 60);
}

/// D8: out of descriptors, accept() neither spins nor stops serving.
#[test]
fn running_out_of_descriptors_does_not_spin() {
    use std::os::unix::process::CommandExt;
    let mut cmd = fathom();
    // SAFETY: setrlimit is async-signal-safe; it only lowers this child's own limit.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 48,
                rlim_max: 48,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let agent = Agent::start_with(cmd, &[]);
    let idle: Vec<TcpStream> = (0..60)
        .map(|_| TcpStream::connect(agent.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let before = agent.cpu_ticks();
    std::thread::sleep(Duration::from_secs(2));
    let spent = agent.cpu_ticks() - before;
    assert!(
        spent < 50,
        "the agent spent {spent} ticks of CPU in 2 s with {} connections waiting",
        idle.len()
    );
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    run_ok(&["stream", &agent.target(), "-n", "1M", "--json"], 60);
}

/// The lab's readiness probe (connect, close) is not logged as a refusal.
#[test]
fn a_readiness_probe_is_not_logged_as_a_refusal() {
    let mut agent = Agent::start(&[]);
    drop(TcpStream::connect(agent.addr).unwrap());
    let mut partial = TcpStream::connect(agent.addr).unwrap();
    partial.write_all(b"FTH").unwrap();
    drop(partial);
    std::thread::sleep(Duration::from_millis(200));
    run_ok(&["stream", &agent.target(), "-n", "1M", "--json"], 60);
    let line = agent.next_log_line();
    assert!(line.contains("completed"), "{line}");
}

#[test]
fn the_command_line_refuses_hostile_values_naming_the_flag() {
    let cases: [(&[&str], &str); 7] = [
        (&["stream", "--affinity", "1024", "-t", "1"], "--affinity"),
        (&["stream", "--affinity", "/1024", "-t", "1"], "--affinity"),
        (&["rr", "--burst", "4294967295", "-t", "1"], "--burst"),
        (
            &["stream", "-n", "10M", "-i", "18446744073.7s"],
            "--interval",
        ),
        (&["stream", "-t", "18446744073s", "--omit", "5s"], "--time"),
        (&["rr", "--size", "1,0"], "--size"),
        (
            &["stream", "-P", "20", "--threads", "20", "--write", "64M"],
            "--write",
        ),
    ];
    for (args, flag) in cases {
        let out = run(args, 30);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(!err.contains(" 4 s"), "{args:?}: {err}");
    }
}

#[test]
fn a_start_far_ahead_is_refused() {
    let addr = in_process(AgentConfig::default());
    let mut plan = rr(1, 1, 1);
    plan.kind = KindPlan::Crr(plan.rr().unwrap().clone());
    let (ready, mut c) = setup(addr, &plan);
    assert!(matches!(ready, ToController::Ready { .. }), "{ready:?}");
    assert!(matches!(
        c.expect(MAX_FRAME).unwrap(),
        ToController::Connected(_)
    ));
    let year = 365 * 86_400 * 1_000_000_000u64;
    c.send(&ToAgent::Start {
        t0: fathom_engine::clock::now_ns() + year,
    })
    .unwrap();
    let message = refusal(c.expect(MAX_FRAME).unwrap());
    assert!(message.contains("start instant"), "{message}");
}
