//! fathom's results: the [`model::Report`] every output is made from, the math that builds it
//! from the endpoints' snapshots, and pure renderers (a report in, bytes out).

pub mod build;
mod cpu;
pub mod csv;
#[doc(hidden)]
pub mod fake;
mod hosts;
pub mod html;
mod intervals;
pub mod json;
pub mod model;
pub mod plot;
mod rr;
pub mod run;
pub mod series;
pub mod stats;
pub mod table;
mod table_rr;
pub mod table_series;
mod table_udp;
mod udp;
pub mod units;
pub mod warnings;

pub use build::build;
pub use model::Report;
pub use run::{EndData, Role, RunData};
