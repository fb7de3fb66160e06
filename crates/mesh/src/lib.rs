//! fathom's measurement mesh as pure logic (no sockets): agents that test their own paths on a
//! schedule (docs/mesh.md).
//!
//! | module | what |
//! | --- | --- |
//! | [`file`] | the mesh file (TOML) in, a checked [`spec::Mesh`] out, errors at FILE:LINE:COLUMN |
//! | [`class`] | interference classes: exclusive, normal, background (in proto: slot bookings carry them) |
//! | [`ring`] | the hash ring giving each member its k latency peers |
//! | [`rotation`] | throughput pairs rotating through the members, a permutation a round |
//! | [`schedule`] | phases, jitter, slip and skips: which pair runs what when |
//! | [`slots`] | one member's slot table with deadlines |
//! | [`health`] | members down, probed with back-off |
//! | [`dispatch`] | one turn of a mesh's loop: book both ends, start, skip |
//! | [`alert`] | hysteresis over each pair's band |
//! | [`status`] | the status document, its matrix and the culprit |
//! | [`report`] | the HTML page: headline, heat-maps of the matrix, each pair's history |
//! | [`sim`] | the scheduler on a virtual clock, at any scale |
//! | [`sink`] | where a mesh's figures go beside the store (metrics) |
#![forbid(unsafe_code)]

pub mod alert;
pub use fathom_proto::class;
pub mod dispatch;
pub mod error;
pub mod file;
mod hash;
pub mod health;
pub mod report;
pub mod ring;
pub mod rotation;
pub mod schedule;
pub mod sim;
pub mod sink;
pub mod slots;
pub mod spec;
pub mod status;

pub use class::Class;
pub use error::MeshError;
pub use spec::Mesh;
