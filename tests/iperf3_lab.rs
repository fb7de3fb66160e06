//! A stock iperf3 client across the lab's WAN emulator against `fathom serve --iperf3` (needs
//! root; without it the test prints SKIP and passes): the UDP loss the client reports, which is
//! fathom's count, agrees with what the emulator dropped on the way. The lab is removed and the
//! agent ended by its PID, even when the test fails.

mod common;
mod wan_common;
use common::run_program as run;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;
use wan_common::*;

/// The iperf3 port of the agent started in h2.
const PORT: &str = "5202";

/// `fathom serve --iperf3` in h2's namespace, keyed with the lab's key so that its iperf3 port
/// listens on h2's address; killed by its PID when dropped.
struct Agent(Child);

impl Agent {
    fn start(lab: &TestLab, netns: &str) -> Agent {
        let key = lab.key_file();
        let listen = format!("{H2}:0");
        let iperf3 = format!("--iperf3={PORT}");
        let mut child = Command::new("ip")
            .args(["netns", "exec", netns, FATHOM, "serve", "--listen", &listen])
            .args(["--key-file", &key, &iperf3])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ip netns exec fathom serve");
        let stderr = child.stderr.take().expect("stderr");
        let agent = Agent(child);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("h2: {line}");
                let _ = tx.send(line);
            }
        });
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("the agent in h2 says where iperf3 clients go");
            if line.contains("iperf3 clients on") {
                assert!(line.contains(&format!("{H2}:{PORT}")), "{line}");
                return agent;
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The h1 → h2 counters of the lab's one WAN link.
fn h1_to_h2(lab: &TestLab) -> Value {
    lab.status()["wan"][0]["counters"]["a_to_b"].clone()
}

/// Datagrams the kernel of namespace `netns` dropped for a full socket receive buffer.
fn rcvbuf_errors(netns: &str) -> u64 {
    let out = run("ip", &["netns", "exec", netns, "cat", "/proc/net/snmp"], 10);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut udp = text.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (
        udp.next().expect("Udp names"),
        udp.next().expect("Udp values"),
    );
    let at = names
        .split_whitespace()
        .position(|n| n == "RcvbufErrors")
        .expect("RcvbufErrors");
    values.split_whitespace().nth(at).unwrap().parse().unwrap()
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn udp_loss_through_a_fathom_server_agrees_with_the_emulators_drops() {
    if !root_or_skip("udp_loss_through_a_fathom_server_agrees_with_the_emulators_drops") {
        return;
    }
    let lab = TestLab::up("ip3loss", "loss=1%");
    let netns = lab.status()["hosts"][1]["netns"]
        .as_str()
        .expect("h2's namespace")
        .to_string();
    let _agent = Agent::start(&lab, &netns);
    let (before, buf_before) = (h1_to_h2(&lab), rcvbuf_errors(&netns));
    let args = ["-c", H2, "-p", PORT, "-u", "-b", "50M", "-t", "2", "-J"];
    let out = lab.exec_h1("iperf3", &args, 60);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "iperf3 {args:?}: {text}");
    let (after, buf_after) = (h1_to_h2(&lab), rcvbuf_errors(&netns));
    let doc: Value = serde_json::from_str(&text).expect("iperf3's JSON");
    let (sent, got) = (&doc["end"]["sum_sent"], &doc["end"]["sum_received"]);
    let lost = n(&got["lost_packets"]);
    let delta = |k: &str| n(&after[k]) - n(&before[k]);
    let dropped: u64 = [
        "dropped_loss",
        "dropped_queue",
        "dropped_ring",
        "dropped_overflow",
    ]
    .iter()
    .map(|k| delta(k))
    .sum();
    let socket = buf_after - buf_before;
    // Every datagram h2 did not read was dropped by the emulator or by h2's socket buffer. The
    // drops iperf3 cannot count are frames that were not datagrams (the control connection's
    // segments, ARP: at most the frames the emulator received beyond the client's datagrams)
    // and datagrams after the last one h2 read, which no later sequence number reveals.
    let others = delta("received").saturating_sub(n(&sent["packets"]));
    let tail = n(&sent["packets"]).saturating_sub(n(&got["packets"]));
    let summary = format!(
        "iperf3 lost {lost} of {}; the emulator dropped {dropped} ({} by its loss model) of {} \
         frames ({others} not datagrams); h2's socket buffer dropped {socket}; {tail} sent after \
         the last datagram h2 read",
        n(&got["packets"]),
        delta("dropped_loss"),
        delta("received")
    );
    eprintln!("{summary}");
    assert!(lost > 20, "1% of ~9000 datagrams: {summary}");
    assert!(lost <= dropped + socket, "{summary}");
    assert!(dropped + socket - lost <= others + tail, "{summary}");
}
