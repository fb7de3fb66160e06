//! fathom's control protocol, shared by the agent and the controller.
//!
//! One TCP connection per test carries the control conversation; each data flow is its own
//! connection to a data port the agent opens for that test. Every connection starts with a fixed
//! [`Preamble`] (magic + protocol version) so that two fathom builds that cannot talk say so
//! plainly; after it, messages are length-prefixed [postcard] frames with a hard size cap.
//!
//! ```text
//!  controller                                   agent
//!  ── connect (control port, default 5301) ──────▶
//!  ── Preamble "FTHM" v, Control ────────────────▶
//!  ◀──────────────────────────── Preamble "FTHM" v   versions differ → both sides say so, close
//!  ◀──────────────── Challenge{nonce, key_required}
//!  ── Auth{mac = HMAC-SHA256(key, nonce)} ───────▶   wrong/missing key → Error, close
//!  ◀─────────────────────────────── Welcome{host}
//!  ── TimeProbe{t1} ─────────────────────────────▶   repeated; the controller keeps the
//!  ◀────────────────────── TimeReply{t1, t2, t3}      minimum-RTT sample as the clock offset
//!  ── Setup{plan} ───────────────────────────────▶   plan validated, limits and memory
//!                                                    checked; data listener opened
//!  ◀──────── Ready{port, udp_ports, cookie, cert}      cert: TLS tests, the DER to pin
//!  ══ data connections: Preamble(Data) + cookie + flow id, one per flow ══▶
//!     (TLS tests: then a TLS handshake on each, before Connected)
//!     (crr: the same opening on every transaction's connection, before its request or TLS)
//!     (UDP kinds: a hello datagram with the same bytes per flow, echoed)
//!  ◀──────────────────────── Connected{flows}
//!
//!  With several hosts, the server agent gets Setup as above and every client agent gets
//!  Join{plan, its flow ids, the server's data address, port(s), cookie, cert} instead: the client
//!  opens its flows to the server and answers Connected{its flows}. Start, snapshots,
//!  heartbeats, Done and Close then go the same way with every agent.
//!  ── Start{t0 in the agent's clock} ───────────▶   both ends begin at t0
//!  ◀──────────────────────── Snapshot{…}            at every interval boundary
//!  ── Heartbeat ─────────────────────────────────▶   at least every second; silence ends the test
//!  ◀──────────────────────── Done{endpoint info}
//!  ── Close ─────────────────────────────────────▶
//!
//!  `fathom doctor HOST` runs no test on its connection: after Welcome it asks for the host's
//!  settings and closes.
//!  ── Settings ──────────────────────────────────▶   the advisor's reader on the agent's host
//!  ◀──────────────────────── Settings{json}          at most SETTINGS_MAX bytes
//!  ── Close ─────────────────────────────────────▶
//!
//!  A mesh (`fathom mesh run`, `fathom serve --mesh`) books slots of an agent's time on a
//!  connection of their own, and reads a mesh agent's results; only after Welcome, so an
//!  agent with a key gives neither to a stranger.
//!  ── Book{class, start_in, hold, holder} ───────▶   the agent's slot table (deadline-freed)
//!  ◀───────────────── Booked{id} | Busy{free_in}
//!  ── Release{id} ───────────────────────────────▶
//!  ◀──────────────────────── Released{held}
//!  ── MeshResults ───────────────────────────────▶   `serve --mesh` agents only
//!  ◀──────────────────────── MeshResults{json}       at most SETTINGS_MAX bytes
//!  ── Close ─────────────────────────────────────▶
//! ```
//! Any malformed or unexpected message is answered with `Error{message}` and the connection is
//! closed; nothing in this crate panics on input. Until `Welcome`, the agent reads frames of at
//! most [`PRE_AUTH_FRAME`] bytes, and the whole handshake has one deadline; after it, frames of
//! up to [`MAX_FRAME`]. Both ends check a plan with [`plan::TestPlan::validate`] (in
//! [`validate`]) before anything runs.
#![forbid(unsafe_code)]

pub mod auth;
pub mod bounds;
pub mod class;
pub mod file;
pub mod flow;
pub mod frame;
pub mod kind;
#[cfg(any(test, feature = "fuzz"))]
pub mod memory;
pub mod msg;
pub mod plan;
pub mod profile;
pub mod rr;
pub mod sample;
pub mod tls;
pub mod udp;
pub mod validate;

pub use frame::{
    Connection, DataHello, FrameError, Preamble, PreambleKind, MAGIC, MAX_FRAME, PRE_AUTH_FRAME,
    PROTOCOL_VERSION,
};
pub use msg::{BookSlot, JoinPlan, ToAgent, ToController, SETTINGS_FRAME, SETTINGS_MAX};

/// The agent's default control port.
pub const DEFAULT_PORT: u16 = 5301;
