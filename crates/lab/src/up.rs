//! `lab up`: record the layout, build it, start the agents (and with `--sshd` an sshd per host)
//! and the WAN links' forwarders, wait until they all answer. Any failure tears down what was made.

use std::path::PathBuf;
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::agent::{AgentCommand, AgentProcess, DEFAULT_AGENT_PORT};
use crate::down::down;
use crate::error::{Error, IoContext, Result};
use crate::ip::{self, Tool};
use crate::ipsec::IpsecOptions;
use crate::lab::{namespaces_of, Lab};
use crate::layout::{Host, Layout};
use crate::name::check_lab_name;
use crate::state::{State, StateDir};
use crate::topology::Topology;
use crate::{hosts_file, netns, operstate, privilege, script, sshd, wan};

/// How long `up` waits for the agents unless told otherwise.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(10);

/// How `up` names the lab and starts its agents.
#[derive(Clone, Debug)]
pub struct UpOptions {
    /// The lab's name.
    pub name: String,
    /// The agent every host runs.
    pub agent: AgentCommand,
    /// The fathom executable that runs each WAN link's forwarder (`<exe> lab wan-router`);
    /// by default the agent's program.
    pub router_exe: PathBuf,
    /// The port agents listen on.
    pub agent_port: u16,
    /// How long to wait for all links to come up and all agents to accept connections.
    pub ready_timeout: Duration,
    /// Run an sshd in every host, with the lab's own keys (see `sshd.rs`).
    pub sshd: bool,
    /// Give every host's agent a scratch directory for file copies ([`crate::files_dir`]).
    pub files: bool,
    /// IPsec between every pair of hosts (see [`crate::ipsec`]).
    pub ipsec: Option<IpsecOptions>,
}

impl UpOptions {
    /// Options for lab `name` running `agent` on the default port with the default timeout,
    /// and WAN forwarders with the agent's program.
    pub fn new(name: &str, agent: AgentCommand) -> UpOptions {
        UpOptions {
            name: name.to_string(),
            router_exe: agent.program.clone(),
            agent,
            agent_port: DEFAULT_AGENT_PORT,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            sshd: false,
            files: false,
            ipsec: None,
        }
    }
}

impl Lab {
    /// Builds `topology` as lab `opts.name`, starts an agent on every host and a forwarder for
    /// every WAN link. The state is
    /// written before anything is created, so `down` can always remove a half-built lab; on
    /// failure this removes it itself.
    pub fn up(topology: &Topology, opts: &UpOptions) -> Result<Lab> {
        privilege::require()?;
        check_lab_name(&opts.name)?;
        let leftovers = namespaces_of(&opts.name)?;
        if !leftovers.is_empty() {
            let what = format!("namespaces {}", leftovers.join(", "));
            return Err(Error::Exists {
                name: opts.name.clone(),
                what,
            });
        }
        let dir = StateDir::of(&opts.name);
        dir.create(&opts.name)?;
        let layout = Layout::new(&opts.name, topology, opts.agent_port);
        let mut lab = Lab {
            dir,
            state: State::new(&opts.name, layout),
        };
        let built = lab.dir.save(&lab.state).and_then(|()| lab.build(opts));
        if let Err(e) = built {
            let _ = down(&opts.name);
            return Err(e);
        }
        Ok(lab)
    }

    fn build(&mut self, opts: &UpOptions) -> Result<()> {
        let layout = &self.state.layout;
        ip::run(Tool::Ip, None, false, &script::create(layout))?;
        wan::setup::prepare(layout)?;
        ip::run_all(
            Tool::Ip,
            layout
                .namespaces()
                .map(|ns| (ns, script::configure(layout, ns))),
        )?;
        ip::run_all(
            Tool::Tc,
            layout
                .namespaces()
                .filter_map(|ns| Some((ns, script::shape(layout, ns)?))),
        )?;
        hosts_file::write(layout)?;
        let deadline = Instant::now() + opts.ready_timeout;
        self.start_agents(&opts.agent, opts.files)?;
        if opts.sshd {
            self.start_sshds()?;
        }
        self.start_forwarders(&opts.router_exe)?;
        operstate::wait_running(&self.state.layout, deadline)?;
        if let Some(ipsec) = &opts.ipsec {
            self.start_ipsec(ipsec)?;
        }
        self.wait_forwarders(deadline)?;
        self.wait_ready(deadline)?;
        for h in self.hosts() {
            sshd::wait_ready(h, deadline)?;
        }
        self.state.complete = true;
        self.dir.save(&self.state)
    }

    /// Starts every host's agent (serving its own scratch directory with `files`), recording
    /// each in the state as soon as it runs.
    fn start_agents(&mut self, agent: &AgentCommand, files: bool) -> Result<()> {
        let key_file = self.dir.key_file();
        for i in 0..self.state.layout.hosts.len() {
            let host = &self.state.layout.hosts[i];
            let listen = ([0, 0, 0, 0], host.agent_port).into();
            let log = self.dir.log_file(&host.name);
            let mut argv = agent.argv(listen, &key_file);
            if files {
                let root = crate::files_dir(&self.state.name).join(&host.name);
                std::fs::create_dir_all(&root)
                    .context(|| format!("creating {}", root.display()))?;
                argv.extend(["--files-root".to_string(), root.display().to_string()]);
            }
            let process = AgentProcess::spawn(&host.netns, argv, &log)?;
            self.state.layout.hosts[i].agent = Some(process);
            self.dir.save(&self.state)?;
        }
        Ok(())
    }

    /// Makes the lab's ssh keys and configs and starts every host's sshd, recording each in
    /// the state as soon as it runs.
    fn start_sshds(&mut self) -> Result<()> {
        sshd::prepare(&self.dir, &self.state.layout)?;
        for i in 0..self.state.layout.hosts.len() {
            let host = &self.state.layout.hosts[i];
            let log = self.dir.log_file(&format!("{}-sshd", host.name));
            self.state.layout.hosts[i].sshd = Some(sshd::start(&self.dir, host, &log)?);
            self.dir.save(&self.state)?;
        }
        Ok(())
    }

    /// Waits until every agent accepts a TCP connection on its host address, failing at
    /// `deadline` or as soon as an agent exits.
    fn wait_ready(&self, deadline: Instant) -> Result<()> {
        for host in self.hosts() {
            wait_one(host, deadline)?;
        }
        Ok(())
    }
}

/// Waits until `host`'s agent accepts a connection; see [`Lab::wait_ready`].
fn wait_one(host: &Host, deadline: Instant) -> Result<()> {
    let agent = host
        .agent
        .as_ref()
        .expect("agents are started before waiting");
    let not_ready = |reason: String| Error::AgentNotReady {
        host: host.name.clone(),
        reason,
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = left.clamp(Duration::from_millis(10), Duration::from_millis(500));
        let error = match netns::connect_in(&host.netns, host.agent_addr(), attempt) {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        if !agent.is_running() {
            return Err(not_ready(format!("it exited; {}", agent.log_summary())));
        }
        if left.is_zero() {
            return Err(not_ready(format!(
                "no connection to {} ({error}); {}",
                host.agent_addr(),
                agent.log_summary()
            )));
        }
        sleep(Duration::from_millis(20));
    }
}
