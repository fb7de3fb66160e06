//! Agents: the process every host runs, started detached inside the host's namespace.
//!
//! An agent is recorded by pid, start time and argv, and is signalled only while all three
//! still match (`/proc/PID/stat`, `/proc/PID/cmdline`), so a recycled pid is never touched.

use std::fs::File;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::{netns, process};

/// The port agents listen on unless told otherwise.
pub const DEFAULT_AGENT_PORT: u16 = 5301;

/// The command line that starts an agent. In `args`, `{listen}` becomes the listen address and
/// `{key_file}` the lab's key file.
#[derive(Clone, Debug)]
pub struct AgentCommand {
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments, with placeholders.
    pub args: Vec<String>,
}

impl AgentCommand {
    /// `<exe> serve --listen {listen} --key-file {key_file}`: the fathom agent.
    pub fn fathom(exe: &Path) -> AgentCommand {
        let args = ["serve", "--listen", "{listen}", "--key-file", "{key_file}"];
        AgentCommand {
            program: exe.to_path_buf(),
            args: args.map(str::to_string).to_vec(),
        }
    }

    /// The full argv with placeholders filled in.
    pub fn argv(&self, listen: SocketAddr, key_file: &Path) -> Vec<String> {
        let fill = |a: &String| {
            a.replace("{listen}", &listen.to_string())
                .replace("{key_file}", &key_file.to_string_lossy())
        };
        std::iter::once(self.program.to_string_lossy().into_owned())
            .chain(self.args.iter().map(fill))
            .collect()
    }
}

/// A started agent, as recorded in the lab's state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProcess {
    /// Its process id.
    pub pid: u32,
    /// Its start time after boot in clock ticks (`/proc/PID/stat` field 22).
    pub start_time: u64,
    /// The argv it was started with.
    pub argv: Vec<String>,
    /// The file its stdout and stderr go to.
    pub log: PathBuf,
}

impl AgentProcess {
    /// Starts `argv` inside namespace `netns` in a session of its own, stdin from /dev/null,
    /// stdout and stderr to `log`. It is not waited for: it outlives the caller.
    pub fn spawn(netns_name: &str, argv: Vec<String>, log: &Path) -> Result<AgentProcess> {
        let ns =
            netns::open(netns_name).context(|| format!("starting an agent in {netns_name}"))?;
        let out = File::create(log).context(|| format!("creating {}", log.display()))?;
        let err = out
            .try_clone()
            .context(|| format!("creating {}", log.display()))?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: between fork and exec the child calls only setns and setsid, both
        // async-signal-safe, and allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                netns::enter(&ns)?;
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .context(|| format!("starting agent `{}` in {netns_name}", argv[0]))?;
        let pid = child.id();
        let start_time = process::stat(pid)
            .ok_or_else(|| Error::AgentNotReady {
                host: netns_name.to_string(),
                reason: "the agent vanished as soon as it started".to_string(),
            })?
            .start_time;
        Ok(AgentProcess {
            pid,
            start_time,
            argv,
            log: log.to_path_buf(),
        })
    }

    /// Whether the recorded process still runs: same pid, same start time, and a command line
    /// that ends with the recorded argv (an interpreter may stand before a script) or, for a
    /// program that retitles itself (sshd), the recorded program as its executable.
    pub fn is_running(&self) -> bool {
        let Some(stat) = process::stat(self.pid) else {
            return false;
        };
        let same_program = || {
            process::cmdline(self.pid).is_some_and(|c| c.ends_with(&self.argv))
                || self
                    .argv
                    .first()
                    .is_some_and(|p| process::exe(self.pid) == Some(p.into()))
        };
        self.not_yet_exited(&stat) && same_program()
    }

    /// Whether `stat` (read for this pid) is still the recorded process before its exit: the
    /// same start time and not a zombie. Unlike [`Self::is_running`] it does not read the command
    /// line, which an exiting process loses before it leaves its namespaces and closes its
    /// sockets.
    fn not_yet_exited(&self, stat: &process::Stat) -> bool {
        stat.start_time == self.start_time && stat.state != 'Z' && stat.state != 'X'
    }

    /// Whether a process that was [`Self::is_running`] when signalled has not yet finished exiting.
    fn still_exiting(&self) -> bool {
        process::stat(self.pid).is_some_and(|stat| self.not_yet_exited(&stat))
    }

    /// The end of the agent's log on one line, for error messages (the log itself may be
    /// removed with the lab).
    pub fn log_summary(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        match lines.len() {
            0 => "its log is empty".to_string(),
            n => format!("its log ends: {}", lines[n.saturating_sub(3)..].join(" | ")),
        }
    }
}

/// Stops agents: SIGTERM to each that still matches its record, SIGKILL after `grace` to any
/// left. Returns the pids that would not go away.
pub fn stop_all(agents: &[&AgentProcess], grace: Duration) -> Vec<u32> {
    let mut running: Vec<&AgentProcess> =
        agents.iter().copied().filter(|a| a.is_running()).collect();
    for agent in &running {
        process::signal(agent.pid, libc::SIGTERM);
    }
    wait_gone(&mut running, grace);
    for agent in &running {
        process::signal(agent.pid, libc::SIGKILL);
    }
    wait_gone(&mut running, Duration::from_secs(1));
    running.iter().map(|a| a.pid).collect()
}

/// Waits up to `wait` for the agents in `running` (each checked running before it was signalled)
/// to exit, reaping any that are our children; leaves in `running` those still there. An agent
/// counts as gone only when it is a zombie or its pid is gone: mid-exit it has lost its command
/// line but still holds its namespace and sockets.
fn wait_gone(running: &mut Vec<&AgentProcess>, wait: Duration) {
    let deadline = Instant::now() + wait;
    loop {
        for agent in running.iter() {
            process::reap(agent.pid);
        }
        running.retain(|a| a.still_exiting());
        if running.is_empty() || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to `wait` until none of `processes` is in the process table any more, reaping those
/// that are our children; returns those still there, with their parent. A stopped process
/// stays listed (a zombie, `ps` showing it `<defunct>`) until its parent collects it, and the
/// lab's processes outlive the `lab up` that started them, so theirs is PID 1 or a subreaper:
/// one that collects orphans only now and then (about every 1.4 s on the machines this project
/// runs on) leaves a lab's charons listed after `down` returned (issue 36).
pub fn wait_reaped(processes: &[&AgentProcess], wait: Duration) -> Vec<(u32, u32)> {
    let deadline = Instant::now() + wait;
    loop {
        let listed: Vec<(u32, u32)> = processes
            .iter()
            .filter_map(|p| {
                process::reap(p.pid);
                let stat = process::stat(p.pid)?;
                (stat.start_time == p.start_time).then_some((p.pid, stat.ppid))
            })
            .collect();
        if listed.is_empty() || Instant::now() >= deadline {
            return listed;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_placeholders() {
        let cmd = AgentCommand::fathom(Path::new("/usr/bin/fathom"));
        let argv = cmd.argv(
            "0.0.0.0:5301".parse().unwrap(),
            Path::new("/run/fathom/lab/x/key"),
        );
        assert_eq!(
            argv,
            [
                "/usr/bin/fathom",
                "serve",
                "--listen",
                "0.0.0.0:5301",
                "--key-file",
                "/run/fathom/lab/x/key"
            ]
        );
    }
}
