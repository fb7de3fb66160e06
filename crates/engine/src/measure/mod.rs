//! Measurement: per-flow counters, CPU accounting, TCP_INFO and host facts.

pub mod counters;
pub mod cpu;
pub mod host;
pub mod latency;
mod published;
pub use published::{load_words, store_words, Publish};
pub mod sock_diag;
pub mod stamp;
pub mod tcp_info;
pub mod udp_snmp;
