//! fathom's data path: test kinds as flow state machines, per-CPU worker event loops, and the
//! measurement that samples them (counters, CPU, TCP_INFO) at real-time interval boundaries.

pub mod clock;
pub mod endpoint;
mod gate;
pub mod kind;
mod kinds;
pub mod measure;
pub mod path;
pub mod payload;
mod recv_wait;
pub mod schedule;
pub mod small_file;
pub mod sockopt;
pub mod spin;
mod timer;
pub mod tls;
mod worker;

pub use endpoint::{Aborter, Prepared, Running};
pub use kind::{Side, Sockets};
pub use kinds::remove_stale_parts as remove_stale_file_parts;
pub use kinds::SharedBarriers as ProfileBarriers;
pub use kinds::{offload_available as udp_offload_available, unsupported as udp_offload_refused};
