//! The controller's end of a control connection: handshake, key proof, clock probes, and the
//! request/answer steps before a test starts.

use super::error::{ControlError, Problem};
use crate::connect::ServerData;
use fathom_engine::clock;
use fathom_proto::plan::TestPlan;
use fathom_proto::sample::{FlowInfo, HostInfo};
use fathom_proto::{
    auth, BookSlot, Connection, FrameError, JoinPlan, Preamble, PreambleKind, ToAgent, ToController,
};
use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the agent may take to answer a step before the test starts.
pub(super) const STEP_TIMEOUT: Duration = Duration::from_secs(35);

/// The sending half of a control connection, shared with the threads that heartbeat it.
pub type Sender = Arc<Mutex<Connection<TcpStream>>>;

/// Sends one message on a shared control connection.
pub(super) fn send(sender: &Sender, m: &ToAgent) -> Result<(), FrameError> {
    let mut w = sender.lock().unwrap_or_else(|p| p.into_inner());
    w.send(m)
}

/// A live control connection.
pub struct Control {
    name: String,
    stream: TcpStream,
    reader: Connection<TcpStream>,
    writer: Arc<Mutex<Connection<TcpStream>>>,
    /// How long each answer is awaited.
    step: Duration,
    /// The agent's host.
    pub host: HostInfo,
}

/// The clock relation to an agent.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClockSync {
    /// Agent clock minus ours, ns.
    pub offset_ns: i64,
    /// Round trip of the probe the offset came from, ns.
    pub rtt_ns: u64,
}

impl Control {
    /// Checks versions on `stream` and proves the key, each answer awaited for at most `step`.
    /// `name` is how errors refer to the agent.
    pub fn open(
        stream: TcpStream,
        name: &str,
        key: Option<&[u8]>,
        step: Duration,
    ) -> Result<Control, ControlError> {
        let e = |problem: Problem| ControlError::Agent {
            agent: name.to_string(),
            problem,
        };
        let io = |x: std::io::Error| e(Problem::Io(x));
        let read = |x: FrameError| e(Problem::Read(describe(x, step)));
        let _ = stream.set_nodelay(true);
        stream.set_read_timeout(Some(step)).map_err(io)?;
        (&stream)
            .write_all(&Preamble::ours(PreambleKind::Control).encode())
            .map_err(io)?;
        let theirs = Preamble::read_from(&mut &stream).map_err(read)?;
        theirs.check_version().map_err(|x| e(Problem::Wire(x)))?;
        let reader = Connection::new(stream.try_clone().map_err(io)?);
        let writer = Arc::new(Mutex::new(Connection::new(stream.try_clone().map_err(io)?)));
        let mut c = Control {
            name: name.to_string(),
            stream,
            reader,
            writer,
            step,
            host: HostInfo::default(),
        };
        let (nonce, key_required) = match c
            .reader
            .expect::<ToController>(fathom_proto::MAX_FRAME)
            .map_err(read)?
        {
            ToController::Challenge {
                nonce,
                key_required,
            } => (nonce, key_required),
            other => return Err(e(unexpected("Challenge", other))),
        };
        if key_required && key.is_none() {
            return Err(e(Problem::NeedsKey));
        }
        c.send(&ToAgent::Auth {
            mac: key.map(|k| auth::answer(k, &nonce)),
        })?;
        match c
            .reader
            .expect::<ToController>(fathom_proto::MAX_FRAME)
            .map_err(read)?
        {
            ToController::Welcome(h) => c.host = h,
            ToController::Error { message } => return Err(e(Problem::Refused(message))),
            other => return Err(e(unexpected("Welcome", other))),
        }
        Ok(c)
    }

    /// Sends a message (safe to call from several threads).
    pub fn send(&self, m: &ToAgent) -> Result<(), ControlError> {
        send(&self.writer, m).map_err(|x| self.problem(Problem::Wire(x)))
    }

    /// `problem`, as this agent's.
    fn problem(&self, problem: Problem) -> ControlError {
        ControlError::Agent {
            agent: self.name.clone(),
            problem,
        }
    }

    /// A sender usable from another thread (heartbeats).
    pub fn sender(&self) -> Sender {
        self.writer.clone()
    }

    /// Receives the next message; an agent `Error` becomes `Err`.
    pub fn recv(&mut self, expecting: &'static str) -> Result<ToController, ControlError> {
        match self.reader.expect::<ToController>(fathom_proto::MAX_FRAME) {
            Ok(ToController::Error { message }) => Err(self.problem(Problem::Said(message))),
            Ok(m) => Ok(m),
            Err(x) => Err(ControlError::Waiting {
                agent: self.name.clone(),
                expecting,
                reason: describe(x, self.step),
            }),
        }
    }

    /// Estimates the agent's clock offset: several probes, the minimum-RTT one wins.
    pub fn sync(&mut self, probes: usize) -> Result<ClockSync, ControlError> {
        let mut best = ClockSync {
            offset_ns: 0,
            rtt_ns: u64::MAX,
        };
        for _ in 0..probes {
            self.send(&ToAgent::TimeProbe {
                t1: clock::now_ns(),
            })?;
            let m = self.recv("TimeReply")?;
            let t4 = clock::now_ns();
            let ToController::TimeReply { t1, t2, t3 } = m else {
                return Err(self.problem(unexpected("TimeReply", m)));
            };
            let rtt = (t4 - t1).saturating_sub(t3.saturating_sub(t2));
            if rtt < best.rtt_ns {
                let offset = ((t2 as i128 - t1 as i128) + (t3 as i128 - t4 as i128)) / 2;
                best = ClockSync {
                    offset_ns: offset as i64,
                    rtt_ns: rtt,
                };
            }
        }
        Ok(best)
    }

    /// Sends the plan to the server agent; returns what it opened, reachable at `ip`.
    pub fn setup(
        &mut self,
        plan: &TestPlan,
        ip: std::net::IpAddr,
    ) -> Result<ServerData, ControlError> {
        self.send(&ToAgent::Setup(Box::new(plan.clone())))?;
        match self.recv("Ready")? {
            ToController::Ready {
                port,
                udp_ports,
                cookie,
                cert,
            } => Ok(ServerData {
                ip,
                port,
                udp_ports,
                cookie,
                cert,
            }),
            other => Err(self.problem(unexpected("Ready", other))),
        }
    }

    /// Asks a client agent to open flows `ids` to the server; returns their facts.
    pub fn join(
        &mut self,
        plan: &TestPlan,
        ids: Vec<u32>,
        server: &ServerData,
    ) -> Result<Vec<FlowInfo>, ControlError> {
        let udp_ports = if server.udp_ports.is_empty() {
            Vec::new()
        } else {
            plan.flows
                .iter()
                .zip(&server.udp_ports)
                .filter(|(f, _)| ids.contains(&f.id))
                .map(|(_, p)| *p)
                .collect()
        };
        self.send(&ToAgent::Join(Box::new(JoinPlan {
            plan: plan.clone(),
            flows: ids,
            server: server.ip,
            port: server.port,
            udp_ports,
            cookie: server.cookie,
            cert: server.cert.clone(),
        })))?;
        self.connected()
    }

    /// Waits until the agent has every data connection.
    pub fn connected(&mut self) -> Result<Vec<FlowInfo>, ControlError> {
        match self.recv("Connected")? {
            ToController::Connected(infos) => Ok(infos),
            other => Err(self.problem(unexpected("Connected", other))),
        }
    }

    /// Asks the agent for its host's settings report (the advisor's JSON, not yet checked),
    /// read in a frame of at most [`fathom_proto::SETTINGS_FRAME`] bytes, then closes.
    pub fn settings(&mut self) -> Result<String, ControlError> {
        self.send(&ToAgent::Settings)?;
        let got = self.large("Settings");
        let _ = self.send(&ToAgent::Close);
        match got? {
            ToController::Settings(json) => Ok(json),
            other => Err(self.problem(unexpected("Settings", other))),
        }
    }

    /// The next message, read in a frame of at most [`fathom_proto::SETTINGS_FRAME`] bytes
    /// (a settings report, mesh results).
    fn large(&mut self, expecting: &'static str) -> Result<ToController, ControlError> {
        self.reader
            .expect::<ToController>(fathom_proto::SETTINGS_FRAME)
            .map_err(|x| ControlError::Waiting {
                agent: self.name.clone(),
                expecting,
                reason: describe(x, self.step),
            })
    }

    /// Asks the agent for a slot of its time (a mesh test): `Booked` or `Busy`.
    pub fn book(&mut self, slot: BookSlot) -> Result<ToController, ControlError> {
        self.send(&ToAgent::Book(slot))?;
        match self.recv("Booked")? {
            m @ (ToController::Booked { .. } | ToController::Busy { .. }) => Ok(m),
            other => Err(self.problem(unexpected("Booked", other))),
        }
    }

    /// Gives back slot `id`: false when the agent no longer held it.
    pub fn release(&mut self, id: u64) -> Result<bool, ControlError> {
        self.send(&ToAgent::Release { id })?;
        match self.recv("Released")? {
            ToController::Released { held } => Ok(held),
            other => Err(self.problem(unexpected("Released", other))),
        }
    }

    /// Asks a mesh agent for its results (JSON, not yet checked), read in a frame of at most
    /// [`fathom_proto::SETTINGS_FRAME`] bytes.
    pub fn mesh_results(&mut self) -> Result<String, ControlError> {
        self.send(&ToAgent::MeshResults)?;
        match self.large("MeshResults")? {
            ToController::MeshResults(json) => Ok(json),
            other => Err(self.problem(unexpected("MeshResults", other))),
        }
    }

    /// Hands the reading half to the caller for the running phase, with a read timeout.
    pub fn into_reader(self, timeout: Duration) -> (Connection<TcpStream>, TcpStream) {
        let _ = self.stream.set_read_timeout(Some(timeout));
        (self.reader, self.stream)
    }
}

/// A clearer wording for a peer that closed, is not fathom, or did not answer within `step`.
fn describe(e: FrameError, step: Duration) -> String {
    match e {
        FrameError::Io(x) if x.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the agent closed the connection (wrong protocol version, or it refused us; see its log)".into()
        }
        other => waited(other, step),
    }
}

/// A read that a socket timeout of `timeout` ended, in words ("timed out after 35 s"), not as
/// the EAGAIN it is ("Resource temporarily unavailable (os error 11)"); other errors as they are.
pub fn waited(e: FrameError, timeout: Duration) -> String {
    match e {
        FrameError::Io(x)
            if matches!(
                x.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            format!(
                "timed out after {} s: the agent sent nothing",
                timeout.as_secs_f64()
            )
        }
        other => other.to_string(),
    }
}

/// An answer that is not the one `want`ed: the agent's own error when it sent one.
fn unexpected(want: &'static str, got: ToController) -> Problem {
    let got = match got {
        ToController::Challenge { .. } => "Challenge",
        ToController::Welcome(_) => "Welcome",
        ToController::TimeReply { .. } => "TimeReply",
        ToController::Ready { .. } => "Ready",
        ToController::Connected(_) => "Connected",
        ToController::Snapshot(_) => "Snapshot",
        ToController::Done(_) => "Done",
        ToController::Settings(_) => "Settings",
        ToController::Booked { .. } => "Booked",
        ToController::Busy { .. } => "Busy",
        ToController::Released { .. } => "Released",
        ToController::MeshResults(_) => "MeshResults",
        ToController::Error { message } => return Problem::Said(message),
    };
    Problem::Unexpected { want, got }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket timeout showed as "Resource temporarily unavailable (os error 11)".
    #[test]
    fn a_socket_timeout_is_named_with_its_length() {
        let eagain = || FrameError::Io(std::io::Error::from_raw_os_error(libc::EAGAIN));
        assert_eq!(
            describe(eagain(), STEP_TIMEOUT),
            "timed out after 35 s: the agent sent nothing"
        );
        assert_eq!(
            waited(eagain(), Duration::from_millis(5_500)),
            "timed out after 5.5 s: the agent sent nothing"
        );
    }
}
