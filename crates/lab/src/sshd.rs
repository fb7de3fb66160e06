//! `lab up --sshd`: an OpenSSH server in every host, so that `scp /tmp/f h2:/tmp/` works inside
//! the lab exactly as written. Everything is the lab's own, in its state directory's `ssh/`:
//! one host key for all its hosts, a client key whose public half is root's only authorized
//! key, a known_hosts naming every host by name and address, and each host's sshd config
//! (listening on that host's addresses only, port 22, keys only). Each host's
//! `/etc/netns/<ns>/ssh/ssh_config` (mounted over /etc/ssh by `ip netns exec`, so by `fathom lab
//! exec`) points `ssh` and `scp` at that key and known_hosts, with strict host key checking.
//! `down` ends each sshd's sessions and then sshd itself, by pid, and removes both directories.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::agent::AgentProcess;
use crate::error::{Error, IoContext, Result};
use crate::layout::{Host, Layout};
use crate::state::StateDir;
use crate::{hosts_file, netns, process};

/// The OpenSSH server every host runs (Debian's openssh-server).
const SSHD: &str = "/usr/sbin/sshd";
/// The directory sshd needs for privilege separation; it refuses to start without it.
const PRIVSEP_DIR: &str = "/run/sshd";
/// The port every host's sshd listens on.
pub const SSH_PORT: u16 = 22;

/// Where the lab's ssh files are.
struct Files {
    dir: PathBuf,
}

impl Files {
    fn of(state: &StateDir) -> Files {
        Files {
            dir: state.path().join("ssh"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn sshd_config(&self, host: &str) -> PathBuf {
        self.path(&format!("sshd_config.{host}"))
    }
}

fn failed(host: &str, reason: String) -> Error {
    Error::Sshd {
        host: host.to_string(),
        reason,
    }
}

/// Makes the lab's keys and known_hosts, every host's sshd config, and the client config each
/// host's `ssh` and `scp` read.
pub fn prepare(state: &StateDir, layout: &Layout) -> Result<()> {
    if !Path::new(SSHD).exists() {
        let reason = format!("{SSHD} is missing: install openssh-server (and openssh-client)");
        return Err(failed("all", reason));
    }
    let f = Files::of(state);
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&f.dir)
        .context(|| format!("creating {}", f.dir.display()))?;
    fs::create_dir_all(PRIVSEP_DIR).context(|| format!("creating {PRIVSEP_DIR}"))?;
    for key in ["host_key", "client_key"] {
        keygen(&f.path(key))?;
    }
    let read = |name: &str| {
        let p = f.path(name);
        fs::read_to_string(&p).context(|| format!("reading {}", p.display()))
    };
    let write =
        |p: PathBuf, text: &str| fs::write(&p, text).context(|| format!("writing {}", p.display()));
    write(f.path("authorized_keys"), &read("client_key.pub")?)?;
    let names: Vec<String> = layout
        .hosts
        .iter()
        .flat_map(|h| {
            std::iter::once(h.name.clone())
                .chain(h.interfaces.iter().map(|i| i.address.to_string()))
        })
        .collect();
    let known = format!("{} {}", names.join(","), read("host_key.pub")?);
    write(f.path("known_hosts"), &known)?;
    for h in &layout.hosts {
        write(f.sshd_config(&h.name), &sshd_config(&f, h))?;
    }
    hosts_file::write_each(layout, "ssh/ssh_config", &client_config(&f))
}

/// A new ed25519 key pair without a passphrase at `path` (and `path.pub`).
fn keygen(path: &Path) -> Result<()> {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "fathom-lab", "-f"])
        .arg(path)
        .output()
        .map_err(|e| Error::Command {
            command: "ssh-keygen".into(),
            message: format!("{e} (install openssh-client)"),
        })?;
    if out.status.success() {
        return Ok(());
    }
    Err(Error::Command {
        command: format!("ssh-keygen -f {}", path.display()),
        message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// Host `h`'s sshd config: its addresses only, the lab's keys only, root by key only.
fn sshd_config(f: &Files, h: &Host) -> String {
    let mut text = format!("Port {SSH_PORT}\n");
    for i in &h.interfaces {
        text += &format!("ListenAddress {}\n", i.address);
    }
    text + &format!(
        "HostKey {}\nAuthorizedKeysFile {}\nPidFile none\nStrictModes no\nUsePAM no\n\
         PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
         KbdInteractiveAuthentication no\nSubsystem sftp internal-sftp\n",
        f.path("host_key").display(),
        f.path("authorized_keys").display()
    )
}

/// What `ssh` and `scp` read inside the lab: the lab's key as root, the lab's known hosts only.
fn client_config(f: &Files) -> String {
    format!(
        "# fathom lab (lab up --sshd): ssh between the lab's hosts\nHost *\n    User root\n    \
         IdentityFile {}\n    IdentitiesOnly yes\n    UserKnownHostsFile {}\n    \
         GlobalKnownHostsFile /dev/null\n    StrictHostKeyChecking yes\n",
        f.path("client_key").display(),
        f.path("known_hosts").display()
    )
}

/// Starts host `h`'s sshd inside its namespace, logging to `log`.
pub fn start(state: &StateDir, h: &Host, log: &Path) -> Result<AgentProcess> {
    let config = Files::of(state).sshd_config(&h.name);
    let argv = [SSHD, "-D", "-e", "-f", &config.to_string_lossy()].map(str::to_string);
    AgentProcess::spawn(&h.netns, argv.to_vec(), log)
}

/// Waits until host `h`'s sshd accepts connections on every address, failing at `deadline` or
/// as soon as it exits.
pub fn wait_ready(h: &Host, deadline: Instant) -> Result<()> {
    let Some(sshd) = &h.sshd else { return Ok(()) };
    for i in &h.interfaces {
        let addr = (i.address, SSH_PORT).into();
        while let Err(e) = netns::connect_in(&h.netns, addr, Duration::from_millis(200)) {
            if !sshd.is_running() {
                return Err(failed(
                    &h.name,
                    format!("it exited; {}", sshd.log_summary()),
                ));
            }
            if Instant::now() >= deadline {
                let reason = format!("no connection to {addr} ({e}); {}", sshd.log_summary());
                return Err(failed(&h.name, reason));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// Ends the sessions every recorded sshd of `layout` forked (its children in its host's
/// namespace), by pid, so that stopping sshd leaves none behind.
pub fn end_sessions(layout: &Layout) {
    for h in &layout.hosts {
        let Some(sshd) = h.sshd.as_ref().filter(|s| s.is_running()) else {
            continue;
        };
        for pid in netns::pids_in(&h.netns) {
            if process::stat(pid).is_some_and(|s| s.ppid == sshd.pid) {
                process::signal(pid, libc::SIGTERM);
            }
        }
    }
}
