//! Helpers for the `fathom launch` tests: processes with a launcher's environment, bounded, and
//! the checks of one launched stream test's JSON.
#![allow(dead_code)]

use serde_json::Value;
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Every variable a launcher sets that rank detection reads: removed from each child, so that a
/// test run inside a Slurm job or under mpirun sees only what it sets.
pub const LAUNCHER_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
    "PMIX_SIZE",
    "PMIX_NAMESPACE",
    "OMPI_MCA_ess_base_jobid",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
];

/// A port that was free a moment ago, for a rank 0 to listen on.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// `launch --rendezvous-port PORT TEST...`: the arguments of a launched test with rank 0
/// listening on `port`.
pub fn launch_args<'a>(port: &'a str, test: &[&'a str]) -> Vec<&'a str> {
    [&["launch", "--rendezvous-port", port][..], test].concat()
}

/// `program args` with stdout and stderr piped and no launcher's variables but `env`.
pub fn command(program: &str, args: &[&str], env: &[(&str, String)]) -> Command {
    let mut c = Command::new(program);
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.env(
        "FATHOM_STORE",
        format!("{}/fathom-tests.db", env!("CARGO_TARGET_TMPDIR")),
    )
    .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
    .args(args)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

/// Waits for `child` at most until `deadline`, then stops it by its PID (SIGTERM, so that a
/// launcher takes its processes down too, then SIGKILL) and fails.
pub fn finish(mut child: Child, deadline: Instant, what: &str) -> Output {
    while Instant::now() < deadline {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signals the child we spawned, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let grace = Instant::now() + Duration::from_secs(5);
    while Instant::now() < grace && child.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("output after kill");
    panic!(
        "{what} did not finish in time; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// True when `program` is on the PATH; without it a test skips, saying so, except under CI=true,
/// where scripts/install-test-deps.sh installs it and a skip would hide a failure.
pub fn have(program: &str, package: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs {package} (scripts/install-test-deps.sh); {program} is missing"
        );
        eprintln!("SKIP: {program} is not installed (package {package})");
    }
    found
}

/// Text of a process's stderr.
pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parses stdout as exactly one JSON document.
pub fn doc(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            err(o)
        )
    })
}

/// Checks a launched stream test of `bytes` with `clients` client ranks: rank 0's agent is the
/// server and received them all, the clients (ranks 1..) sent them between them, exactly.
pub fn assert_launched_stream(d: &Value, clients: usize, bytes: u64) {
    assert!(d["error"].is_null(), "{}", d["error"]);
    assert_eq!(
        d["test"]["agent"].as_str().unwrap_or("").split('@').next(),
        Some("rank0")
    );
    let names: Vec<&str> = d["test"]["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let expected: Vec<String> = (1..=clients).map(|r| format!("rank{r}@")).collect();
    assert_eq!(names.len(), clients, "{names:?}");
    for (n, e) in names.iter().zip(&expected) {
        assert!(n.starts_with(e.as_str()), "{names:?}");
    }
    assert_eq!(
        d["summary"]["bytes"].as_u64(),
        Some(bytes),
        "{}",
        d["summary"]
    );
    let hosts = d["hosts"].as_array().expect("hosts");
    let by_role = |role: &str| -> u64 {
        hosts
            .iter()
            .filter(|h| h["role"] == role)
            .map(|h| h["bytes"].as_u64().unwrap_or(0))
            .sum()
    };
    assert_eq!(by_role("server"), bytes);
    assert_eq!(by_role("client"), bytes);
    assert_eq!(
        hosts.iter().filter(|h| h["role"] == "client").count(),
        clients
    );
}
