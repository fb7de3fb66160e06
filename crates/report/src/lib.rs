//! fathom's results: the [`model::Report`] every output is made from, the math that builds it
//! from the endpoints' snapshots, the documents over several runs (series, comparisons, store
//! listings, studies), and pure exporters, one per format (a document in, bytes out; see
//! [`export`]).
#![forbid(unsafe_code)]

pub mod about;
pub mod build;
mod cells;
pub mod comparison;
pub mod cpu;
pub mod csv;
pub mod export;
#[doc(hidden)]
pub mod fake;
mod floor;
mod hosts;
pub mod html;
mod intervals;
pub mod json;
pub mod listing;
pub mod live;
pub mod metric;
pub mod model;
pub mod plot;
pub mod run;
mod section;
mod sections;
pub mod series;
pub mod settings;
pub mod stats;
pub mod study;
pub mod table;
mod table_hosts;
pub mod table_series;
mod table_stream;
mod tls;
pub mod warnings;
mod words;

pub use build::build;
pub use export::{Document, Exporter};
pub use model::Report;
pub use run::{EndData, Role, RunData};
pub use sections::file::figures as file;
pub use sections::profile::responsiveness;
pub use sections::rr::figures::round_trips;
