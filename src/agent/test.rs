//! The one test a session runs, through its phases: setup (admission, sockets, the data
//! listener), the flows' arrival, preparation, the common start, and teardown, which frees
//! everything the test allocated.

use super::arrival::{self, Expected};
use super::config::{AgentConfig, Reservation};
use super::data;
use super::error::AgentError;
use super::event::{Arrival, Event};
use crate::connect::{self, ServerData};
use fathom_engine::kind::{Kind, Wiring};
use fathom_engine::tls::TlsEnd;
use fathom_engine::{clock, Aborter, Prepared, Side, Sockets};
use fathom_proto::plan::TestPlan;
use fathom_proto::sample::FlowInfo;
use fathom_proto::{auth, JoinPlan, ToController};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A test's start instant may be at most this far ahead (controllers pick well under a second),
/// so that a controller cannot hold a slot and its sockets idle until a distant start.
const MAX_START_LEAD: Duration = Duration::from_secs(60);

/// The one test a session runs, through its phases.
#[derive(Default)]
pub(super) struct Test {
    plan: Option<Arc<TestPlan>>,
    stop_accepting: Arc<AtomicBool>,
    sockets: Vec<Option<Arrival>>,
    arrived: usize,
    prepared: Option<Prepared>,
    running: Option<(Aborter, std::thread::JoinHandle<()>)>,
    pub(super) deadline: Option<Instant>,
    pub(super) finished: bool,
    pub(super) aborted: Option<String>,
    /// The memory admission reserved for this test.
    memory: Option<Reservation>,
    /// The directory file copies stay below (the agent's `--files-root`).
    files_root: Option<std::path::PathBuf>,
    /// TLS tests: this end's configuration.
    tls: Option<TlsEnd>,
}

impl Test {
    /// Opens what the test's kind needs; returns the messages that answer Setup.
    pub(super) fn setup(
        &mut self,
        plan: TestPlan,
        cfg: &AgentConfig,
        ip: std::net::IpAddr,
        tx: &mpsc::Sender<Event>,
    ) -> Result<Vec<ToController>, AgentError> {
        if self.plan.is_some() {
            return Err(AgentError::SetupTwice);
        }
        self.memory = Some(cfg.admit(&plan, Side::Server, plan.flows.len())?);
        self.files_root = cfg.files_root.clone();
        let cookie = auth::random::<16>();
        let n = plan.flows.len();
        let (stop, tx) = (self.stop_accepting.clone(), tx.clone());
        let no_listener = AgentError::Listener;
        self.sockets = (0..n).map(|_| None).collect();
        let plan = Arc::new(plan);
        self.plan = Some(plan.clone());
        let cert = match &plan.tls {
            Some(opts) => {
                self.tls = Some(cfg.tls_server(opts)?);
                cfg.identity.get().map(|id| id.cert_der())
            }
            None => None,
        };
        let ready = |port, udp_ports| ToController::Ready {
            port,
            udp_ports,
            cookie,
            cert: cert.clone(),
        };
        match Kind::of(plan.kind.id())?.wiring() {
            Wiring::TcpPerFlow => {
                let listener = data::listen(ip, &plan).map_err(no_listener)?;
                let port = data::port_of(&listener);
                let want = Expected {
                    cookie,
                    flows: n,
                    tls: self.tls.clone(),
                };
                std::thread::spawn(move || arrival::accept_flows(listener, want, stop, tx));
                Ok(vec![ready(port, Vec::new())])
            }
            Wiring::UdpPerFlow => {
                let socks = data::udp_sockets(ip, &plan).map_err(no_listener)?;
                let udp_ports = socks.iter().map(data::port_of).collect();
                std::thread::spawn(move || data::pair_udp(socks, cookie, stop, tx));
                Ok(vec![ready(0, udp_ports)])
            }
            Wiring::TcpPerTransaction => {
                let listener = data::listen(ip, &plan).map_err(no_listener)?;
                let port = data::port_of(&listener);
                let ids = plan.flows.iter().map(|f| f.id).collect();
                let infos = self.prepare(Side::Server, ids, Sockets::Listen(listener, cookie))?;
                Ok(vec![
                    ready(port, Vec::new()),
                    ToController::Connected(infos),
                ])
            }
        }
    }

    /// Takes a data connection that arrived; once all have, prepares the flows and returns
    /// what answers the controller.
    pub(super) fn arrived(&mut self, a: Arrival) -> Result<Option<Vec<FlowInfo>>, AgentError> {
        let plan = self.plan.clone().ok_or(AgentError::NoPlan)?;
        let slot = self
            .sockets
            .get_mut(a.flow as usize)
            .ok_or(AgentError::NoSuchFlow)?;
        *slot = Some(a);
        self.arrived += 1;
        if self.arrived < self.sockets.len() {
            return Ok(None);
        }
        let arrived = plan.flows.iter().zip(self.sockets.drain(..));
        let sockets = match self.tls {
            Some(_) => Sockets::Tls(
                arrived
                    .filter_map(|(f, s)| match s {
                        Some(Arrival {
                            sock,
                            tls: Some((session, ns)),
                            ..
                        }) => Some((*f, sock, session, ns)),
                        _ => None,
                    })
                    .collect(),
            ),
            None => Kind::of(plan.kind.id())?.wiring().per_flow(
                arrived
                    .filter_map(|(f, s)| s.map(|a| (*f, a.sock)))
                    .collect(),
            ),
        };
        self.prepare(
            Side::Server,
            plan.flows.iter().map(|f| f.id).collect(),
            sockets,
        )
        .map(Some)
    }

    /// Joins a test as a client: opens this agent's flows to the server agent.
    pub(super) fn join(
        &mut self,
        j: JoinPlan,
        cfg: &AgentConfig,
    ) -> Result<Vec<FlowInfo>, AgentError> {
        if self.plan.is_some() {
            return Err(AgentError::JoinAfterSetup);
        }
        self.memory = Some(cfg.admit(&j.plan, Side::Client, j.flows.len())?);
        self.files_root = cfg.files_root.clone();
        self.plan = Some(Arc::new(j.plan.clone()));
        self.tls = connect::tls_client(&j.plan, j.cert.clone())?;
        let server = ServerData {
            ip: j.server,
            port: j.port,
            udp_ports: j.udp_ports,
            cookie: j.cookie,
            cert: j.cert,
        };
        let sockets = connect::connect(&server, &j.plan, &j.flows, None)?;
        self.prepare(Side::Client, j.flows, sockets)
    }

    fn prepare(
        &mut self,
        side: Side,
        ids: Vec<u32>,
        sockets: Sockets,
    ) -> Result<Vec<FlowInfo>, AgentError> {
        let plan = self.plan.clone().ok_or(AgentError::NoPlan)?;
        if plan.file().is_some() && self.files_root.is_none() {
            // Without a root the engine would take the paths as the user's own (the controller's end).
            return Err(AgentError::NoFilesRoot);
        }
        let prepared = Prepared::new(
            plan,
            (side, self.files_root.as_deref()),
            ids,
            sockets,
            self.tls.clone(),
        )
        .map_err(AgentError::Flows)?;
        let infos = prepared.flow_infos().to_vec();
        self.prepared = Some(prepared);
        Ok(infos)
    }

    pub(super) fn start(
        &mut self,
        t0: u64,
        cfg: &AgentConfig,
        tx: &mpsc::Sender<Event>,
    ) -> Result<(), AgentError> {
        let lead = t0.saturating_sub(clock::now_ns());
        if lead > MAX_START_LEAD.as_nanos() as u64 {
            return Err(AgentError::StartLead {
                lead_s: lead / 1_000_000_000,
                most_s: MAX_START_LEAD.as_secs(),
            });
        }
        let prepared = self.prepared.take().ok_or(AgentError::StartEarly)?;
        let snap_tx = tx.clone();
        let running = prepared
            .start(
                t0,
                Box::new(move |s| drop(snap_tx.send(Event::Snap(Box::new(s))))),
            )
            .map_err(AgentError::Start)?;
        let aborter = running.aborter();
        let done_tx = tx.clone();
        let joiner =
            std::thread::spawn(move || drop(done_tx.send(Event::Done(Box::new(running.join())))));
        self.running = Some((aborter, joiner));
        self.deadline = Some(
            Instant::now()
                + Duration::from_nanos(lead)
                + Duration::from_nanos(cfg.max_duration_ns)
                + Duration::from_secs(5),
        );
        Ok(())
    }

    pub(super) fn finish(&self) {
        if let Some((a, _)) = &self.running {
            a.finish();
        }
    }

    pub(super) fn abort(&mut self) {
        self.stop_accepting.store(true, Ordering::Relaxed);
        if let Some((a, _)) = &self.running {
            a.abort();
        }
    }

    /// Stops everything and waits until the test's threads and sockets are gone.
    pub(super) fn teardown(&mut self) {
        self.abort();
        if let Some((_, joiner)) = self.running.take() {
            let _ = joiner.join();
        }
        self.prepared = None;
        self.sockets.clear();
    }

    pub(super) fn summary(&self) -> String {
        match (&self.plan, self.finished, &self.aborted) {
            (None, _, _) => "no test run".into(),
            (Some(p), _, Some(r)) => format!(
                "{} with {} flows aborted by the controller: {r}",
                p.kind.name(),
                p.flows.len()
            ),
            (Some(p), true, None) => {
                format!("{} with {} flows completed", p.kind.name(), p.flows.len())
            }
            (Some(p), false, None) => format!(
                "{} with {} flows stopped early",
                p.kind.name(),
                p.flows.len()
            ),
        }
    }
}
