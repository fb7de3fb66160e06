//! Runs `ip` and `tc` batch scripts, optionally inside a namespace, several at once.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};

use crate::error::{Error, Result};

/// Which iproute2 tool runs a script.
#[derive(Clone, Copy, Debug)]
pub enum Tool {
    /// `ip`: namespaces, links, addresses.
    Ip,
    /// `tc`: queueing disciplines.
    Tc,
}

/// A batch script that is running; [`Batch::wait`] collects its outcome.
pub struct Batch {
    child: Child,
    command: String,
}

/// Starts `tool [-n netns] [-force] -batch -` with `script` on its standard input.
/// With `force`, the tool goes on after a failing line.
pub fn start(tool: Tool, netns: Option<&str>, force: bool, script: &str) -> Result<Batch> {
    let program = match tool {
        Tool::Ip => "ip",
        Tool::Tc => "tc",
    };
    let mut cmd = Command::new(program);
    if let Some(ns) = netns {
        cmd.args(["-n", ns]);
    }
    if force {
        cmd.arg("-force");
    }
    cmd.args(["-batch", "-"]);
    let command = format!(
        "{program}{} -batch -",
        netns.map(|n| format!(" -n {n}")).unwrap_or_default()
    );
    let failed = |message: String| Error::Command {
        command: command.clone(),
        message,
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot run {program}: {e} (install iproute2)")))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    if let Err(e) = stdin.write_all(script.as_bytes()) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(failed(format!("writing its script: {e}")));
    }
    Ok(Batch { child, command })
}

/// Runs a script to completion; see [`start`].
pub fn run(tool: Tool, netns: Option<&str>, force: bool, script: &str) -> Result<()> {
    start(tool, netns, force, script)?.wait()
}

impl Batch {
    /// Waits for the script; an error carries the tool's complaint on one line.
    pub fn wait(mut self) -> Result<()> {
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        let status = self.child.wait().map_err(|e| Error::Command {
            command: self.command.clone(),
            message: e.to_string(),
        })?;
        if status.success() {
            return Ok(());
        }
        let message: Vec<&str> = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(2)
            .collect();
        let message = if message.is_empty() {
            status.to_string()
        } else {
            message.join("; ")
        };
        Err(Error::Command {
            command: self.command,
            message,
        })
    }
}

/// Most scripts [`run_all`] runs at the same time.
const PARALLEL: usize = 16;

/// Runs every `(namespace, script)`, up to [`PARALLEL`] at a time; stops at the first error
/// (after waiting for the scripts already started) and returns it.
pub fn run_all<'a>(tool: Tool, scripts: impl IntoIterator<Item = (&'a str, String)>) -> Result<()> {
    let scripts: Vec<(&str, String)> = scripts.into_iter().collect();
    for chunk in scripts.chunks(PARALLEL) {
        let mut batches = Vec::with_capacity(chunk.len());
        let mut first_error = None;
        for (netns, script) in chunk {
            match start(tool, Some(netns), false, script) {
                Ok(b) => batches.push(b),
                Err(e) => {
                    first_error = Some(e);
                    break;
                }
            }
        }
        for batch in batches {
            if let Err(e) = batch.wait() {
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
    }
    Ok(())
}
