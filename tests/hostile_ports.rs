//! The agent under attack, round two (issue 21, items 6-8 and 10): strangers on a test's data
//! ports are neither answered nor counted nor able to delay the test, a TLS handshake cannot hold
//! a session, and a controller that never reads is cut off as silent. Each case is a real agent
//! and strangers made by the test; timings are bounded generously.

mod common;
use common::*;
use fathom_proto::{Connection, ToAgent};
use std::io::{Cursor, Write};
use std::time::{Duration, Instant};

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
