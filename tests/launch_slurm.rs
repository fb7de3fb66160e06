//! `fathom launch` under Slurm's real srun (Debian's slurm-wlm and munge): a one-node cluster
//! made for the test in a temporary directory (munged with its own key and socket, slurmctld
//! and slurmd as root, the node declaring 4 CPUs whatever this machine has), `srun -n 4` running
//! one stream test with exact byte counts. Every daemon is stopped by its PID when the test
//! ends, also when it fails.

mod launch_common;
use launch_common::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The cluster's daemons, stopped (SIGTERM, then SIGKILL) in reverse order when dropped.
struct Daemons(Vec<(String, Child)>);

impl Daemons {
    fn start(&mut self, what: &str, program: &str, args: &[&str], dir: &Path) {
        let log = std::fs::File::create(dir.join(format!("{what}.out"))).expect("log file");
        let child = Command::new(program)
            .args(args)
            .env("SLURM_CONF", dir.join("slurm.conf"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        self.0.push((what.to_string(), child));
    }
}

impl Drop for Daemons {
    fn drop(&mut self) {
        for (_, child) in self.0.iter_mut().rev() {
            // SAFETY: signals a daemon this test started, by its PID.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until && child.try_wait().ok().flatten().is_none() {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// slurm.conf for one node, `localhost` at 127.0.0.1 with 4 CPUs, everything in `dir`.
fn config(dir: &Path, ctld_port: u16, slurmd_port: u16) -> String {
    let d = dir.display();
    format!(
        "ClusterName=fathomtest\n\
         SlurmctldHost=localhost(127.0.0.1)\n\
         SlurmctldPort={ctld_port}\nSlurmdPort={slurmd_port}\n\
         SlurmUser=root\nSlurmdUser=root\n\
         AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={d}/munge.sock\n\
         StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
         ProctrackType=proctrack/pgid\nTaskPlugin=task/none\nMpiDefault=none\n\
         SwitchType=switch/none\nSchedulerType=sched/builtin\n\
         SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
         JobCompType=jobcomp/none\nJobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         SlurmdParameters=config_overrides\nReturnToService=2\n\
         NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN\n\
         PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n"
    )
}

/// Waits until the node is idle (sinfo), at most 30 s.
fn wait_for_the_node(dir: &Path) {
    let until = Instant::now() + Duration::from_secs(30);
    let mut last = String::new();
    while Instant::now() < until {
        let child = command("sinfo", &["-h", "-o", "%T"], &[])
            .env("SLURM_CONF", dir.join("slurm.conf"))
            .spawn()
            .expect("sinfo");
        let out = finish(child, Instant::now() + Duration::from_secs(10), "sinfo");
        last = String::from_utf8_lossy(&out.stdout).trim().to_string() + &err(&out);
        if last == "idle" {
            return;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let log = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    panic!(
        "the node is not idle after 30 s: {last}\nslurmctld: {}\nslurmd: {}",
        log("slurmctld.log"),
        log("slurmd.log")
    );
}

#[test]
fn srun_n_4_runs_one_stream_test() {
    let tools = [
        ("munged", "munge"),
        ("mungekey", "munge"),
        ("slurmctld", "slurm-wlm"),
        ("slurmd", "slurm-wlm"),
        ("srun", "slurm-wlm"),
        ("sinfo", "slurm-wlm"),
    ];
    if !tools.iter().all(|(p, pkg)| have(p, pkg)) {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    for sub in ["state", "spool"] {
        std::fs::create_dir(dir.join(sub)).unwrap();
    }
    let key = dir.join("munge.key");
    let made = Command::new("mungekey")
        .arg("--create")
        .arg(format!("--keyfile={}", key.display()))
        .status()
        .expect("mungekey");
    assert!(made.success(), "mungekey failed");
    std::fs::write(
        dir.join("slurm.conf"),
        config(dir, free_port(), free_port()),
    )
    .unwrap();
    let at = |f: &str| dir.join(f).display().to_string();
    let mut daemons = Daemons(Vec::new());
    let munge_args = [
        "--foreground".to_string(),
        "--force".into(),
        format!("--socket={}", at("munge.sock")),
        format!("--key-file={}", key.display()),
        format!("--log-file={}", at("munged.log")),
        format!("--pid-file={}", at("munged.pid")),
        format!("--seed-file={}", at("munge.seed")),
    ];
    let munge_args: Vec<&str> = munge_args.iter().map(String::as_str).collect();
    daemons.start("munged", "munged", &munge_args, dir);
    let until = Instant::now() + Duration::from_secs(10);
    while !dir.join("munge.sock").exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let conf = at("slurm.conf");
    daemons.start("slurmctld", "slurmctld", &["-D", "-i", "-f", &conf], dir);
    daemons.start(
        "slurmd",
        "slurmd",
        &["-D", "-f", &conf, "-N", "localhost"],
        dir,
    );
    wait_for_the_node(dir);

    let port = free_port().to_string();
    let fathom = env!("CARGO_BIN_EXE_fathom");
    let srun = ["-n", "4", "-t", "2", fathom];
    let args = [
        &srun[..],
        &launch_args(&port, &["stream", "-n", "10M", "--json"]),
    ]
    .concat();
    let child = command("srun", &args, &[])
        .env("SLURM_CONF", &conf)
        .spawn()
        .expect("srun");
    let out = finish(child, Instant::now() + Duration::from_secs(120), "srun");
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert_launched_stream(&doc(&out), 3, 10 << 20);
    drop(daemons);
}
