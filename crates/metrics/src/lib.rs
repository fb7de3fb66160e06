//! fathom's OpenMetrics: the mesh's metric families ([`MeshMetrics`], built on the
//! prometheus-client crate) and an HTTP `GET /metrics` endpoint ([`serve`]).
//!
//! ```text
//! mesh scheduler ──rr / datagrams / throughput / alert / outcome──> MeshMetrics ──> families
//! fathom serve ──AgentCounts (its atomics, read at each scrape)──────────^          │
//!                                              Prometheus <──GET /metrics── serve ─┘
//! ```
//! - Pair series `{source, peer, test}` exist only for each source's sampled peers (at most
//!   k, [`MeshMetrics::set_peers`]); every figure also goes to the source's aggregate
//!   `{source, test}`, so the series grow as sources × (k + 1), not as members².
//! - Peers are labelled by member name, never by address; a departed peer's series are removed.
//! - docs/metrics.md lists every family, its type, unit and labels, and the alert rules and
//!   dashboard shipped in deploy/.

mod agent;
mod families;
mod histogram;
mod mesh;
mod serve;

pub use agent::AgentCounts;
pub use families::Outcome;
pub use histogram::{LAG_BUCKETS, LATENCY_BUCKETS};
pub use mesh::{MeshMetrics, MAX_LABEL};
pub use serve::{serve, CONNECTION_DEADLINE, HEAD_DEADLINE, MAX_CONNECTIONS, OPENMETRICS};
