//! iperf3's control connection from the server's side (`fathom serve --iperf3`): the input is
//! what a client sends on it (the 37-byte cookie, the length-framed parameter JSON, the state
//! bytes, its framed results), run through the server's control state machine over an
//! in-memory connection (`fathom_iperf3::fuzz`), with no data stream opened. Bounds on the
//! JSON's length, the parameters' values, and every state the client may send must answer
//! without a panic or a hang. No sockets: it runs without root.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fathom_iperf3::fuzz::fuzz_control(data));
