//! A file copy's receiving end, fed by its peers: the options a peer's Setup or Join carries,
//! then each flow's range header, bytes and digest (the layout is in
//! `fathom::agent::fuzz::fuzz_file`). Bounds, overlapping or short ranges, wrong digests and
//! bytes past them must end in an error for that copy, never a panic, a hang or a file committed
//! that does not match. Runs in a private network namespace (needs root), like `control`.

#![no_main]

use fathom::agent::fuzz;
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: fuzz::isolate_network().expect("the fuzz target needs root for a private network namespace"),
    |data: &[u8]| fuzz::fuzz_file(data)
);
