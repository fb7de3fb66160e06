//! The control messages, one enum per direction.

use crate::class::Class;
use crate::plan::TestPlan;
use crate::sample::{EndpointInfo, FlowInfo, HostInfo, Snapshot};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Controller → agent.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum ToAgent {
    /// Answer to the challenge; `None` when the controller has no key.
    Auth {
        /// HMAC-SHA256(key, nonce).
        mac: Option<[u8; 32]>,
    },
    /// Clock probe: the controller's monotonic time when sent.
    TimeProbe {
        /// Controller's send time, ns.
        t1: u64,
    },
    /// The test to prepare, as its accepting (server) end.
    Setup(Box<TestPlan>),
    /// The test to prepare as one of its connecting (client) ends: open these flows to the
    /// server agent's data ports.
    Join(Box<JoinPlan>),
    /// Begin at `t0`, the agent's monotonic clock in ns.
    Start {
        /// Start instant in the agent's clock.
        t0: u64,
    },
    /// The controller is alive.
    Heartbeat,
    /// The controller's end of a counted test finished: end gracefully (as a time limit would).
    Finish,
    /// Stop now; the reason is logged.
    Abort {
        /// Why.
        reason: String,
    },
    /// The controller has everything; the agent may free the test.
    Close,
    /// Send this host's settings report (`fathom doctor HOST`): the advisor's reader run on the
    /// agent's host, answered by [`ToController::Settings`].
    Settings,
    /// Book a slot of this host's time for a mesh test, answered by [`ToController::Booked`]
    /// or [`ToController::Busy`].
    Book(BookSlot),
    /// Give back a slot booked on this host, answered by [`ToController::Released`].
    Release {
        /// The slot's id, as [`ToController::Booked`] gave it.
        id: u64,
    },
    /// Send the results of the mesh this agent runs (`fathom serve --mesh`), answered by
    /// [`ToController::MeshResults`].
    MeshResults,
}

/// Agent → controller.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum ToController {
    /// Authentication challenge.
    Challenge {
        /// Random nonce to sign.
        nonce: [u8; 32],
        /// Whether the agent insists on a key.
        key_required: bool,
    },
    /// Authentication passed.
    Welcome(HostInfo),
    /// Clock probe answer in the agent's monotonic clock.
    TimeReply {
        /// Echo of the controller's send time.
        t1: u64,
        /// Agent receive time.
        t2: u64,
        /// Agent send time.
        t3: u64,
    },
    /// Data listener open.
    Ready {
        /// TCP port for the data connections.
        port: u16,
        /// UDP kinds: one port per flow, in plan order, each to be paired with a hello datagram.
        udp_ports: Vec<u16>,
        /// Secret each data connection (or hello datagram) must present.
        cookie: [u8; 16],
        /// TLS tests: the DER of the certificate the data port presents (the only one the
        /// connecting side accepts).
        cert: Option<Vec<u8>>,
    },
    /// All data connections arrived.
    Connected(Vec<FlowInfo>),
    /// A measurement.
    Snapshot(Box<Snapshot>),
    /// The agent's end finished.
    Done(Box<EndpointInfo>),
    /// Something failed; the connection closes after this.
    Error {
        /// One line saying what.
        message: String,
    },
    /// The answer to [`ToAgent::Settings`]: the agent host's settings as the advisor's JSON
    /// (`fathom_advisor::wire`), at most [`SETTINGS_MAX`] bytes.
    Settings(String),
    /// The slot asked for is given.
    Booked {
        /// Its id, to release it.
        id: u64,
    },
    /// The slot asked for overlaps a conflicting one.
    Busy {
        /// How long from now until the earliest start this host would give (the same class and
        /// hold), ns; none when its slot table is full.
        free_in_ns: Option<u64>,
    },
    /// The answer to [`ToAgent::Release`].
    Released {
        /// False when the slot was not held (released before, or freed at its deadline).
        held: bool,
    },
    /// The answer to [`ToAgent::MeshResults`]: the mesh status document (JSON) of the tests
    /// this agent ran, at most [`SETTINGS_MAX`] bytes.
    MeshResults(String),
}

/// A slot of an agent's time for one mesh test, from now or later, freed at its deadline
/// (`start_in_ns + hold_ns` from now) even if it is never released. The agent bounds every
/// value: it starts at most a day ahead and lasts at most a day; the holder is cut to 200
/// bytes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BookSlot {
    /// The test's interference class.
    pub class: Class,
    /// How long from now the slot starts, ns.
    pub start_in_ns: u64,
    /// How long it lasts, ns.
    pub hold_ns: u64,
    /// Who holds it, for the agent's log: the mesh, the test and the pair.
    pub holder: String,
}

/// The longest settings report an agent sends, and the frame cap its reader applies (with
/// [`SETTINGS_FRAME`]) before parsing it.
pub const SETTINGS_MAX: usize = 4 << 20;

/// The largest frame that carries a settings report: the report and its framing.
pub const SETTINGS_FRAME: usize = SETTINGS_MAX + 16;

/// What a client agent needs to join a test whose server is another agent.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct JoinPlan {
    /// The whole test.
    pub plan: TestPlan,
    /// Ids of the flows this client opens, in plan order.
    pub flows: Vec<u32>,
    /// The server agent's data address.
    pub server: IpAddr,
    /// Its TCP data port.
    pub port: u16,
    /// Its UDP ports for this client's flows, in the order of `flows`.
    pub udp_ports: Vec<u16>,
    /// The secret the server handed out.
    pub cookie: [u8; 16],
    /// TLS tests: the DER of the server's certificate, to pin.
    pub cert: Option<Vec<u8>>,
}
