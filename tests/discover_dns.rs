//! `--agents-from dns:` against dnsmasq (Debian's `dnsmasq-base`) on a loopback port: 200 A
//! records for one name (an answer too large for UDP, fetched again over TCP) all found, and SRV
//! records naming real agents' ports running a real test. dnsmasq is started for each test and
//! ended by its PID, even when the test fails; nothing outside the test's directory changes.

mod common;
use common::*;
use fathom_cluster::discover::dns::Query;
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A dnsmasq serving a hosts file and SRV records on 127.0.0.1:`port`, under `timeout` (so it
/// ends within 120 s whatever happens to the test), ended by that PID when dropped.
struct Dnsmasq {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        // SAFETY: signals the `timeout` we spawned, by its PID; it passes SIGTERM to dnsmasq.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Dnsmasq {
    /// Serves `hosts` (lines of a hosts file) and `srv` (`--srv-host` values); `None` when
    /// dnsmasq is not installed (outside CI only).
    fn start(tag: &str, hosts: &str, srv: &[String]) -> Option<Dnsmasq> {
        if Command::new("dnsmasq").arg("--version").output().is_err() {
            assert!(
                std::env::var("CI").is_err(),
                "dnsmasq is missing: scripts/install-test-deps.sh installs it"
            );
            eprintln!("skipped: dnsmasq is not installed (scripts/install-test-deps.sh)");
            return None;
        }
        let dir = std::path::PathBuf::from(format!(
            "{}/dnsmasq-{tag}-{}",
            env!("CARGO_TARGET_TMPDIR"),
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hosts"), hosts).unwrap();
        let port = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new("timeout");
        cmd.args([
            "120",
            "dnsmasq",
            "--keep-in-foreground",
            "--conf-file=/dev/null",
            "--no-resolv",
            "--no-hosts",
        ])
        .args([
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            "--user=root",
            "--log-facility=-",
        ])
        .arg(format!("--port={port}"))
        .arg(format!("--addn-hosts={}", dir.join("hosts").display()))
        .arg(format!("--pid-file={}", dir.join("pid").display()))
        .args(srv.iter().map(|s| format!("--srv-host={s}")))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        let child = cmd.spawn().expect("start dnsmasq");
        Some(Dnsmasq { child, port, dir })
    }

    /// `FATHOM_DNS_SERVER`'s value for it.
    fn server(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// Asks `query` of `dns` until it answers (dnsmasq takes a moment to start), at most 10 s.
fn ask(dns: &Dnsmasq, query: &str, want: usize) -> Vec<fathom_cluster::discover::Agent> {
    let q: Query = query.parse().unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let found = q.list_at(Some(&dns.server()), Duration::from_secs(10));
        match found {
            Ok(a) if a.len() >= want || Instant::now() > until => return a,
            Err(e) if Instant::now() > until => panic!("{e}"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

#[test]
fn two_hundred_address_records_are_all_found() {
    let hosts: String = (1..=200)
        .map(|i| format!("127.0.{}.{} agents.fathom.test\n", 1 + i / 250, i % 250))
        .collect();
    let Some(dns) = Dnsmasq::start("a", &hosts, &[]) else {
        return;
    };
    let agents = ask(&dns, "agents.fathom.test:5302", 200);
    assert_eq!(agents.len(), 200, "all 200 records, past what UDP carries");
    let mut addrs: Vec<_> = agents.iter().map(|a| a.addr.clone()).collect();
    addrs.sort();
    addrs.dedup();
    assert_eq!(addrs.len(), 200);
    assert!(
        addrs
            .iter()
            .all(|a| a.starts_with("127.0.1.") && a.ends_with(":5302")),
        "{addrs:?}"
    );
}

#[test]
fn srv_records_name_the_agents_of_a_real_test() {
    let agents: Vec<Agent> = (0..3).map(|_| Agent::start(&[])).collect();
    let hosts: String = (0..3)
        .map(|i| format!("127.0.0.1 agent-{i}.fathom.test\n"))
        .collect();
    let srv: Vec<String> = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            format!(
                "_fathom._tcp.agents.fathom.test,agent-{i}.fathom.test,{},0,{}",
                a.addr.port(),
                10 + i
            )
        })
        .collect();
    let Some(dns) = Dnsmasq::start("srv", &hosts, &srv) else {
        return;
    };
    assert_eq!(ask(&dns, "_fathom._tcp.agents.fathom.test", 3).len(), 3);
    let server = format!("FATHOM_DNS_SERVER={}", dns.server());
    let args = [
        &server,
        env!("CARGO_BIN_EXE_fathom"),
        "stream",
        "--agents-from",
        "dns:_fathom._tcp.agents.fathom.test",
        "--expect",
        "3",
        "--server",
        "agent-1.fathom.test",
        "-n",
        "2M",
        "--json",
    ];
    let out = run_program("env", &args, 120);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["summary"]["bytes"].as_u64(), Some(2 << 20));
    assert_eq!(j["hosts"][0]["name"], "agent-1.fathom.test");
    assert_eq!(j["hosts"].as_array().unwrap().len(), 3);
}
