//! The agent's control path from the first byte a controller sends: preamble, authentication,
//! frame decoding, plan admission and the session's state machine, over an in-memory control
//! connection. The first input byte picks the agent: odd = keyed (so the rest can only fail
//! authentication), even = no key (the rest reaches every message). Runs in a private network
//! namespace (needs root) so that no fuzzed plan reaches beyond this machine's loopback.

#![no_main]

use fathom::agent::{fuzz, AgentConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: fuzz::isolate_network().expect("the fuzz target needs root for a private network namespace"),
    |data: &[u8]| {
        let Some((&pick, bytes)) = data.split_first() else {
            return;
        };
        let cfg = AgentConfig {
            key: (pick & 1 == 1).then(|| b"fuzz".to_vec()),
            ..AgentConfig::default()
        };
        fuzz::fuzz_session(bytes, &cfg);
    }
);
