//! A test's flows: each one data connection (or UDP socket pair), and the way its payload goes.

use serde::{Deserialize, Serialize};

/// Which way a flow's payload goes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The client end sends (stream) or asks (request/response).
    Forward,
    /// The server end sends.
    Reverse,
}

/// One flow (one data connection) of a test.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPlan {
    /// Index of the flow, 0-based, unique within the test.
    pub id: u32,
    /// Which side sends.
    pub dir: Direction,
}
