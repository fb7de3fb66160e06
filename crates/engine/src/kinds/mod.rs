//! The test kinds; each in its own file, listed once in [`REGISTRY`].

mod stream;

use crate::kind::Kind;

/// Every kind the engine can run.
pub static REGISTRY: &[&dyn Kind] = &[&stream::Stream];
