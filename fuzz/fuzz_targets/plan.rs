//! A test plan as a peer sends it: any bytes that decode as a `TestPlan` go through the agent's
//! admission for both ends (`validate()`, the memory estimate and budget, the agent's limits),
//! which must answer without panicking whatever the values.

#![no_main]

use fathom::agent::{fuzz, AgentConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz::fuzz_plan(data, &AgentConfig::default()));
