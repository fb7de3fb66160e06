//! One host's charon: started inside the host's namespace and in a mount namespace of its own
//! where the host's IPsec directory is `/run` (charon 5.9 writes its PID file to
//! /var/run/charon.pid, which would clash between hosts), then driven with `swanctl` over its
//! vici socket from outside.

use std::process::Command;
use std::time::{Duration, Instant};

use super::config::HostFiles;
use crate::agent::AgentProcess;
use crate::error::{Error, Result};
use crate::layout::Host;
use crate::process;

/// strongSwan's IKE daemon.
pub const CHARON: &str = "/usr/lib/ipsec/charon";
/// strongSwan's control tool.
const SWANCTL: &str = "swanctl";

/// An IPsec failure on `host`.
pub fn failed(host: &str, reason: impl std::fmt::Display) -> Error {
    Error::Ipsec(format!("IPsec on host {host}: {reason}"))
}

/// Starts `host`'s charon, logging its stdout and stderr to `log`, and waits (until
/// `deadline`) for its vici socket. The record names charon itself, so that `down` and
/// `status` recognise it by pid, start time and command line like an agent.
pub fn start(host: &Host, files: &HostFiles, deadline: Instant) -> Result<AgentProcess> {
    let script =
        format!("mount --bind \"$0\" /run && STRONGSWAN_CONF=/run/strongswan.conf exec {CHARON}");
    let argv = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        &script,
        &files.dir.to_string_lossy(),
    ]
    .map(str::to_string);
    let log = files.dir.join("charon.out");
    let mut process = AgentProcess::spawn(&host.netns, argv.to_vec(), &log)?;
    loop {
        if process::exe(process.pid).is_some_and(|e| e.as_os_str() == CHARON) {
            process.argv = vec![CHARON.to_string()];
        }
        if process.argv.len() == 1 && files.vici().exists() {
            return Ok(process);
        }
        process::reap(process.pid);
        if process::stat(process.pid).is_none_or(|s| s.state == 'Z') {
            return Err(failed(
                &host.name,
                format!("charon exited; {}", process.log_summary()),
            ));
        }
        if Instant::now() >= deadline {
            let _ = crate::agent::stop_all(&[&process], Duration::from_secs(1));
            return Err(failed(
                &host.name,
                "charon did not open its vici socket in time",
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `swanctl ARGS --uri <host's socket>`, bounded by `timeout`; its stdout, or an error with
/// what it said.
pub fn swanctl(files: &HostFiles, args: &[&str], timeout: Duration) -> Result<String> {
    let secs = timeout.as_secs().max(1).to_string();
    let out = Command::new("timeout")
        .args(["-k", "2", &secs, SWANCTL])
        .args(args)
        .args(["--uri", &files.vici_uri()])
        .output()
        .map_err(|e| Error::Command {
            command: SWANCTL.to_string(),
            message: e.to_string(),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout);
    }
    let said: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .chain(stdout.lines())
        .filter(|l| !l.starts_with("opening directory") && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    Err(Error::Command {
        command: format!("{SWANCTL} {}", args.join(" ")),
        message: said.join(" | "),
    })
}

/// Loads the host's connections and keys into its charon.
pub fn load(host: &str, files: &HostFiles) -> Result<()> {
    let conf = files.swanctl_conf();
    let conf = conf.to_string_lossy();
    swanctl(
        files,
        &["--load-all", "--noprompt", "--file", &conf],
        Duration::from_secs(10),
    )
    .map(drop)
    .map_err(|e| failed(host, e))
}
