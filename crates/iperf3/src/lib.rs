//! iperf3's protocol. `fathom serve --iperf3` answers stock iperf3 clients (3.x), one test at a
//! time as iperf3's server does: the client's receiver figures are fathom's counts, and what
//! fathom measured on its end (bytes, TCP_INFO, CPU) goes to the agent's log. `fathom stream
//! --iperf3` and `fathom udp --iperf3` drive a stock `iperf3 -s` (`client`, `udp_client`).
//!
//! Layers, one per file: `wire` (states, cookie, framed JSON), `params` (the client's options,
//! bounded), `server` (the listener) and `slot` (its one test slot), `session` (the control
//! state machine, diagrammed there), `job`, `stream` and `udp` (the data path), `results` (the
//! result exchange), `log` and `interval` (what the agent's log says), `figures`, `json` and
//! `json_end` (the client's `-J` document in iperf3's shape), `store` (a test as a fathom run).
//! The socket calls that need `unsafe` live in fathom-engine; this crate has none.
#![forbid(unsafe_code)]

mod auth;
mod client;
mod client_interval;
mod error;
mod figures;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
mod interval;
mod job;
mod json;
mod json_end;
mod log;
mod params;
mod peer;
mod results;
mod server;
mod session;
mod slot;
mod store;
mod stream;
mod udp;
mod udp_client;
mod wire;

pub use auth::{password_hash, Auth, AuthFileError, UsersError, DEFAULT_SKEW_S};
pub use client::{run as run_client, Both, Event, Options as ClientOptions, Start};
pub use client_interval::Interval;
pub use error::TestError;
pub use job::StreamEnd;
pub use json::{document as json_document, error_document, start as json_start, Intervals, Target};
pub use json_end::end as json_end;
pub use params::{
    Params, MAX_MSS, MAX_OMIT, MAX_PARALLEL, MAX_TCP_LEN, MAX_UDP_LEN, MAX_WINDOW, MIN_UDP_LEN,
};
pub use results::stream_id;
pub use server::{Server, DEFAULT_PORT};
pub use store::client_report;
