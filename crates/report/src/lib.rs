//! fathom's results: the [`model::Report`] every output is made from, the math that builds it
//! from the endpoints' snapshots, and pure renderers (a report in, bytes out).

pub mod build;
mod cpu;
pub mod csv;
#[doc(hidden)]
pub mod fake;
mod hosts;
mod intervals;
pub mod json;
pub mod model;
pub mod run;
mod rr;
pub mod table;
mod table_rr;
pub mod warnings;

pub use build::build;
pub use run::{EndData, Role, RunData};
pub use model::Report;
